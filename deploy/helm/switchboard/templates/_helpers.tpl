{{/* The chart's name, or nameOverride. */}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name, shared by every object of a release: the Service's DNS name. */}}
{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "switchboard.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "switchboard.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "switchboard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The Secret holding `token` and `databaseUrl`. */}}
{{- define "switchboard.secretName" -}}
{{- if .Values.secret.create }}
{{- include "switchboard.fullname" . }}
{{- else }}
{{- required "secret.existingSecret: name a Secret with keys token and databaseUrl, or set secret.create" .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{/*
The daemon's config file: the user's `config`, then what the chart owns (it wins). The daemon's
Host check (README.md, "Security: Host and Origin checks") must accept the Service's names, by
which other pods and the ingress controller reach it; the kubelet's probes and pod-IP clients
pass as the address the connection arrived at.
*/}}
{{- define "switchboard.config" -}}
{{- $fullname := include "switchboard.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $serviceNames := list $fullname (printf "%s.%s" $fullname $ns) (printf "%s.%s.svc" $fullname $ns) (printf "%s.%s.svc.cluster.local" $fullname $ns) }}
{{- $hosts := concat $serviceNames .Values.allowedHosts }}
{{- if .Values.ingress.enabled }}
{{- $hosts = append $hosts .Values.ingress.host }}
{{- end }}
{{- $owned := dict "host" "0.0.0.0" "port" (int .Values.service.port) "allowedHosts" (uniq $hosts) "allowedOrigins" .Values.allowedOrigins }}
{{- merge $owned (deepCopy .Values.config) | toPrettyJson }}
{{- end }}
