{{/*
isamatch.image: the reference of one image of .Values.images, by digest
when one is set, else by tag.
  {{ include "isamatch.image" (list . "webhook") }}
*/}}
{{- define "isamatch.image" -}}
{{- $root := index . 0 -}}
{{- $img := index $root.Values.images (index . 1) -}}
{{- if $img.digest -}}
{{ $img.repository }}@{{ $img.digest }}
{{- else -}}
{{ $img.repository }}:{{ $img.tag }}
{{- end -}}
{{- end -}}

{{/*
isamatch.config: a manifest of config/ (files/config links to it), with the
namespaces of .Values.namespaces in place of the shipped ones. config/ is
the one source of these objects: every namespace reference in it is
"isamatch-system" (which names nothing else) or "namespace:
isamatch-labeler" (the labeler's objects share that name with their
namespace).
  {{ include "isamatch.config" (list . "webhook/rbac.yaml") }}
*/}}
{{- define "isamatch.config" -}}
{{- $root := index . 0 -}}
{{- $path := printf "files/config/%s" (index . 1) -}}
{{- $text := $root.Files.Get $path -}}
{{- if not $text -}}
{{- fail (printf "the chart has no %s: files/config must link to config/" $path) -}}
{{- end -}}
{{- $text = $text | replace "isamatch-system" $root.Values.namespaces.webhook -}}
{{- $text = $text | replace "namespace: isamatch-labeler" (printf "namespace: %s" $root.Values.namespaces.labeler) -}}
{{ $text }}
{{- end -}}

{{/*
isamatch.setPullSecrets: sets imagePullSecrets of a pod spec (a dict from
fromYaml) from .Values.images.pullSecrets.
  {{- include "isamatch.setPullSecrets" (list . $podSpec) }}
*/}}
{{- define "isamatch.setPullSecrets" -}}
{{- $root := index . 0 -}}
{{- $pod := index . 1 -}}
{{- with $root.Values.images.pullSecrets -}}
{{- $secrets := list -}}
{{- range . }}{{ $secrets = append $secrets (dict "name" .) }}{{ end -}}
{{- $_ := set $pod "imagePullSecrets" $secrets -}}
{{- end -}}
{{- end -}}

{{/*
isamatch.hashName: name-<10 characters of the SHA-256 of data>, so that a
changed ConfigMap gets a new name and rolls the pods that mount it (as
kustomize's configMapGenerator does, with its own hash).
  {{ include "isamatch.hashName" (list "isamatch-rebalancer-policy" $policy) }}
*/}}
{{- define "isamatch.hashName" -}}
{{ index . 0 }}-{{ index . 1 | sha256sum | trunc 10 }}
{{- end -}}
