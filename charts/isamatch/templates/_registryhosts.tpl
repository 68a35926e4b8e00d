{{- /*
isamatch.registryHostsFiles: the containerd hosts directories the webhook
resolves images through (config/components/registry-hosts), as JSON of
directory name -> hosts.toml: .Values.webhook.registryHosts.files, or the
component's own docker.io file when that is empty.
*/ -}}
{{- define "isamatch.registryHostsFiles" -}}
{{- $f := .Values.webhook.registryHosts.files -}}
{{- if not $f }}{{ $f = dict "docker.io" (.Files.Get "files/config/components/registry-hosts/docker.io.hosts.toml") }}{{ end -}}
{{- toJson $f -}}
{{- end -}}
