{{/*
isamatch.credentialProviderConfig: the CredentialProviderConfig the
webhook runs plugins by: .Values.webhook.credentialProviders.config, else
config/components/credential-providers/config.yaml.
*/}}
{{- define "isamatch.credentialProviderConfig" -}}
{{- .Values.webhook.credentialProviders.config | default (.Files.Get "files/config/components/credential-providers/config.yaml") -}}
{{- end -}}
