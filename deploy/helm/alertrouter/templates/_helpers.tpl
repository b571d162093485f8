{{/* Name of the chart, overridable. */}}
{{- define "alertrouter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "alertrouter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "alertrouter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "alertrouter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: alertrouter
{{- end }}

{{/* Selector labels of the router pods. */}}
{{- define "alertrouter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "alertrouter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: router
{{- end }}

{{/* Selector labels of the bundled Redis pod. */}}
{{- define "alertrouter.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "alertrouter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{/* Name of the Secret mounted at /etc/alertrouter/secrets, or "". */}}
{{- define "alertrouter.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else if .Values.secrets.files }}
{{- include "alertrouter.fullname" . }}-secrets
{{- end }}
{{- end }}

{{/*
The store section of router.yml, from the redis values. Fails on values
that cannot work, so a bad install stops at `helm install`.
*/}}
{{- define "alertrouter.store" -}}
{{- $r := .Values.redis }}
{{- $modes := list "none" "bundled" "external" "sentinel" "cluster" }}
{{- if not (has $r.mode $modes) }}
{{- fail (printf "redis.mode %q: want one of %s" $r.mode (join ", " $modes)) }}
{{- end }}
{{- if and (eq $r.mode "none") (gt (int .Values.replicaCount) 1) }}
{{- fail "replicaCount > 1 needs a shared store: set redis.mode (bundled, external, sentinel or cluster)" }}
{{- end }}
{{- if and (has $r.mode (list "external" "sentinel" "cluster")) (empty $r.addrs) }}
{{- fail (printf "redis.mode %s needs redis.addrs (host:port list)" $r.mode) }}
{{- end }}
{{- if and (eq $r.mode "sentinel") (empty $r.masterName) }}
{{- fail "redis.mode sentinel needs redis.masterName" }}
{{- end }}
{{- if and $r.passwordKey (not (include "alertrouter.secretName" .)) }}
{{- fail "redis.passwordKey names a key of secrets.existingSecret (or secrets.files), and neither is set" }}
{{- end }}
{{- $store := dict "fail_closed" $r.failClosed "key_prefix" $r.keyPrefix }}
{{- if ne $r.mode "none" }}
{{- $redis := dict }}
{{- if eq $r.mode "bundled" }}
{{- $_ := set $redis "addrs" (list (printf "%s-redis:6379" (include "alertrouter.fullname" .))) }}
{{- else }}
{{- $_ := set $redis "addrs" $r.addrs }}
{{- end }}
{{- if eq $r.mode "sentinel" }}{{ $_ := set $redis "master_name" $r.masterName }}{{ end }}
{{- if eq $r.mode "cluster" }}{{ $_ := set $redis "cluster" true }}{{ end }}
{{- if $r.username }}{{ $_ := set $redis "username" $r.username }}{{ end }}
{{- if $r.passwordKey }}{{ $_ := set $redis "password_file" (printf "/etc/alertrouter/secrets/%s" $r.passwordKey) }}{{ end }}
{{- if $r.db }}{{ $_ := set $redis "db" $r.db }}{{ end }}
{{- if $r.tls }}{{ $_ := set $redis "tls" $r.tls }}{{ end }}
{{- $_ := set $store "redis" $redis }}
{{- end }}
{{- toYaml $store }}
{{- end }}

{{/* router.yml: the config values with the store section filled in. */}}
{{- define "alertrouter.routerYML" -}}
{{- $cfg := deepCopy .Values.config }}
{{- if hasKey $cfg "store" }}
{{- fail "config.store: set the store through the redis values, not config.store" }}
{{- end }}
{{- /* A ConfigMap is no place for a secret: refuse inline secret values
       (a ${VAR} reference or a *_file key is fine). */}}
{{- $inline := regexFind "(?m)^[ -]*(routing_key|service_key|token|app_token|signing_secret|bearer_token|password|credentials): +['\"]?[^$'\" ]" (toYaml $cfg) }}
{{- if and $inline (not .Values.allowInlineSecrets) }}
{{- fail (printf "config: %q holds a secret inline, which would be rendered into a ConfigMap: put it in the Secret and use its *_file key (e.g. routing_key_file: /etc/alertrouter/secrets/pagerduty-routing-key), or a ${VAR} from env; allowInlineSecrets: true accepts it" (regexReplaceAll ":.*" (regexReplaceAll "^[ -]*" $inline "") ": …")) }}
{{- end }}
{{- $_ := set $cfg "store" (fromYaml (include "alertrouter.store" .)) }}
{{- toYaml $cfg }}
{{- end }}

{{/* http or https, from the web config. */}}
{{- define "alertrouter.scheme" -}}
{{- if .Values.webConfig.tls_server_config }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/*
Seconds, rounded up, of a duration such as 25s, 1m30s or 500ms (the
router's flags and config); fails on anything else.
*/}}
{{- define "alertrouter.seconds" -}}
{{- $d := toString . }}
{{- if not (regexMatch "^([0-9]+(ms|s|m|h))+$" $d) }}
{{- fail (printf "%q is not a duration the chart can add up (e.g. 5s, 1m30s)" $d) }}
{{- end }}
{{- $unit := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 }}
{{- $ms := 0 }}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" $d -1 }}
{{- $ms = add $ms (mul (regexFind "^[0-9]+" .) (get $unit (regexReplaceAll "^[0-9]+" . ""))) }}
{{- end }}
{{- div (add $ms 999) 1000 }}
{{- end }}

{{/*
terminationGracePeriodSeconds, checked: after SIGTERM the router serves for
shutdownDelay, then drains in-flight webhooks for up to webhook.timeout + 5s,
so a shorter grace period would have the kubelet kill webhooks in flight.
*/}}
{{- define "alertrouter.terminationGracePeriodSeconds" -}}
{{- $timeout := dig "webhook" "timeout" "25s" .Values.config }}
{{- $need := add (include "alertrouter.seconds" .Values.shutdownDelay) (include "alertrouter.seconds" $timeout) 5 }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $need) }}
{{- fail (printf "terminationGracePeriodSeconds %v is shorter than shutdownDelay %s + config.webhook.timeout %s + 5s = %vs: the kubelet would kill webhooks in flight" .Values.terminationGracePeriodSeconds .Values.shutdownDelay $timeout $need) }}
{{- end }}
{{- .Values.terminationGracePeriodSeconds }}
{{- end }}
