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

{{/*
The full name with "-<suffix>" appended, the full name cut first so the
whole stays within 63 characters: a Service's name is a DNS label, and the
API server refuses a longer one. Called with (list . "redis").
*/}}
{{- define "alertrouter.suffixedName" -}}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "alertrouter.fullname" (index . 0) | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{/*
The router's image: repository:tag, repository@digest with image.digest
(repository:tag@digest when both are set; the digest wins at pull time).
A digest given as the tag (repo:sha256:…, which no runtime can pull) is
refused.
*/}}
{{- define "alertrouter.image" -}}
{{- $i := .Values.image }}
{{- $tag := toString (default "" $i.tag) }}
{{- if or (contains ":" $tag) (contains "@" $tag) }}
{{- fail (printf "image.tag %q is not a tag (it would render %s:%s, an invalid image reference): put a digest in image.digest (sha256:…) and leave image.tag empty or a plain tag" $tag $i.repository $tag) }}
{{- end }}
{{- if $i.digest }}
{{- if $tag }}{{ printf "%s:%s@%s" $i.repository $tag $i.digest }}{{ else }}{{ printf "%s@%s" $i.repository $i.digest }}{{ end }}
{{- else }}
{{- printf "%s:%s" $i.repository (default .Chart.AppVersion $tag) }}
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

{{/*
The chart's anti-affinity (podAntiAffinity: true): replicas preferably on
different nodes. Merged into the affinity value unless that sets a
podAntiAffinity of its own.
*/}}
{{- define "alertrouter.podAntiAffinity" -}}
preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "alertrouter.selectorLabels" . | nindent 10 }}
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
{{- include "alertrouter.suffixedName" (list . "secrets") }}
{{- end }}
{{- end }}

{{/*
The bundled Redis' password (redis.mode bundled): the Secret and key that
hold it, and where the router reads it. redis.passwordKey names a key of the
router's own Secret; without it the chart generates a Secret
<fullname>-redis (redis.yaml).
*/}}
{{- define "alertrouter.redisAuthSecret" -}}
{{- if .Values.redis.passwordKey }}{{ include "alertrouter.secretName" . }}{{ else }}{{ include "alertrouter.suffixedName" (list . "redis") }}{{ end }}
{{- end }}
{{- define "alertrouter.redisAuthKey" -}}
{{- default "redis-password" .Values.redis.passwordKey }}
{{- end }}
{{- define "alertrouter.redisPasswordFile" -}}
{{- if .Values.redis.passwordKey }}
{{- printf "/etc/alertrouter/secrets/%s" .Values.redis.passwordKey }}
{{- else if eq .Values.redis.mode "bundled" }}
{{- print "/etc/alertrouter/redis-auth/redis-password" }}
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
{{- /* The router takes several addrs without master_name as Redis Cluster
       seed nodes (store/config.go): "external" with several would be a
       Cluster client against plain nodes, never ready ("NOAUTH" or
       "MOVED" answers). The topology is said by the mode, never implied. */}}
{{- if and (eq $r.mode "external") (gt (len $r.addrs) 1) }}
{{- fail (printf "redis.mode external is one Redis node, but redis.addrs lists %d addresses (%s): the router would take them as Redis Cluster seed nodes, and against a primary and its replica it never becomes ready. Give external only the primary's (or the managed endpoint's) address; for Redis Cluster set redis.mode cluster, for Sentinel redis.mode sentinel with redis.masterName" (len $r.addrs) (join ", " $r.addrs)) }}
{{- end }}
{{- if and (eq $r.mode "cluster") (ne (int (default 0 $r.db)) 0) }}
{{- fail (printf "redis.db %v: Redis Cluster has only db 0 (redis.mode cluster), and the router refuses any other: leave redis.db at 0 (use redis.keyPrefix to separate installations)" $r.db) }}
{{- end }}
{{- if and $r.passwordKey (not (include "alertrouter.secretName" .)) }}
{{- fail "redis.passwordKey names a key of secrets.existingSecret (or secrets.files), and neither is set" }}
{{- end }}
{{- if and (eq $r.mode "bundled") $r.username }}
{{- fail "redis.username: the bundled Redis has only its default user (a password, requirepass): leave redis.username empty" }}
{{- end }}
{{- if and (eq $r.mode "bundled") $r.tls }}
{{- fail "redis.tls: the bundled Redis speaks plain TCP (no tls-port), so a router set to TLS never connects (\"context deadline exceeded\" at every handshake): leave redis.tls empty with redis.mode bundled, or run a Redis with TLS yourself and use redis.mode external, sentinel or cluster" }}
{{- end }}
{{- $store := dict "fail_closed" $r.failClosed "key_prefix" $r.keyPrefix }}
{{- if ne $r.mode "none" }}
{{- $redis := dict }}
{{- if eq $r.mode "bundled" }}
{{- $_ := set $redis "addrs" (list (printf "%s:6379" (include "alertrouter.suffixedName" (list . "redis")))) }}
{{- else }}
{{- $_ := set $redis "addrs" $r.addrs }}
{{- end }}
{{- if eq $r.mode "sentinel" }}{{ $_ := set $redis "master_name" $r.masterName }}{{ end }}
{{- if eq $r.mode "cluster" }}{{ $_ := set $redis "cluster" true }}{{ end }}
{{- if $r.username }}{{ $_ := set $redis "username" $r.username }}{{ end }}
{{- with include "alertrouter.redisPasswordFile" . }}{{ $_ := set $redis "password_file" . }}{{ end }}
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
{{- $found := include "alertrouter.inlineSecrets" (dict "v" $cfg "p" "" "k" "") | trim }}
{{- /* redis.tls becomes store.redis.tls in the same ConfigMap. */}}
{{- $found = printf "%s\n%s" $found (include "alertrouter.inlineSecrets" (dict "v" (default dict .Values.redis.tls) "p" "redis.tls" "k" "tls") | trim) | trim }}
{{- if and $found (not .Values.allowInlineSecrets) }}
{{- $lines := splitList "\n" $found }}
{{- $first := splitList "\t" (first $lines) | first }}
{{- $leaf := regexReplaceAll "^.*\\." (regexReplaceAll "\\[[0-9]+\\]$" $first "") "" }}
{{- $what := list }}
{{- range $lines }}{{ $f := splitList "\t" . }}{{ $what = append $what (printf "%s: %s" (index $f 0) (index $f 1)) }}{{ end }}
{{- fail (printf "config: %q holds a secret inline, which would be rendered into a ConfigMap (%s): put it in the Secret and use its *_file key (e.g. routing_key_file: /etc/alertrouter/secrets/pagerduty-routing-key, api_url_file, key_file, http_headers files), or a ${VAR} from env; allowInlineSecrets: true accepts it" (printf "%s: …" $leaf) (join "; " $what)) }}
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
shutdownDelay, then drains in-flight webhooks for up to webhook.timeout + 5s
and closes its store and journal in what is left of that, at least 1s: a
shorter grace period would have the kubelet kill webhooks in flight, or the
last store writes of a drain that took its whole bound.
*/}}
{{- define "alertrouter.terminationGracePeriodSeconds" -}}
{{- $timeout := dig "webhook" "timeout" "25s" .Values.config }}
{{- $need := add (include "alertrouter.seconds" .Values.shutdownDelay) (include "alertrouter.seconds" $timeout) 6 }}
{{- if lt (int .Values.terminationGracePeriodSeconds) (int $need) }}
{{- fail (printf "terminationGracePeriodSeconds %v is shorter than shutdownDelay %s + config.webhook.timeout %s + 6s (the drain's 5s, the close's last 1s) = %vs: the kubelet would kill webhooks in flight or the last store writes" .Values.terminationGracePeriodSeconds .Values.shutdownDelay $timeout $need) }}
{{- end }}
{{- .Values.terminationGracePeriodSeconds }}
{{- end }}

{{/*
Inline secrets in the config values, one "path<TAB>what" line each (""
when none). Walks maps and lists; called with (dict "v" value "p" path
"k" key the value is under). A secret is: a value of a secret key
(routing_key, token, password, oauth2's client_secret, …) other than a
${VAR} reference; a tls_config (or tls) key; http_headers values or
secrets (files are fine); a Slack api_url of an incoming webhook (the URL
is the secret); credentials in any URL (scheme://user:password@host).
*/}}
{{- define "alertrouter.inlineSecrets" -}}
{{- $secretKeys := list "routing_key" "service_key" "token" "app_token" "signing_secret" "bearer_token" "password" "credentials" "client_secret" }}
{{- $p := .p }}{{- $k := .k }}
{{- if kindIs "map" .v }}
{{- $m := .v }}
{{- range $key, $x := $m }}
{{- $path := ternary $key (printf "%s.%s" $p $key) (eq $p "") }}
{{- if and (has $key $secretKeys) (include "alertrouter.isInline" $x) }}
{{ $path }}	an inline secret
{{- else if and (eq $key "key") (has $k (list "tls_config" "tls")) (include "alertrouter.isInline" $x) }}
{{ $path }}	an inline TLS private key (use key_file)
{{- else if and (eq $key "api_url") (eq $k "slack_configs") (include "alertrouter.isInline" $x) (or (contains "/services/" (toString $x)) (not (or $m.token $m.token_file $m.app_token $m.app_token_file))) }}
{{ $path }}	a Slack incoming-webhook URL, which is itself the secret (use api_url_file)
{{- else if and (eq $key "http_headers") (kindIs "map" $x) }}
{{- range $h, $hv := $x }}
{{- if and (kindIs "map" $hv) (or (get $hv "values") (get $hv "secrets")) }}
{{ $path }}.{{ $h }}	header values inline (use files)
{{- end }}
{{- end }}
{{- else }}
{{- include "alertrouter.inlineSecrets" (dict "v" $x "p" $path "k" $key) }}
{{- end }}
{{- end }}
{{- else if kindIs "slice" .v }}
{{- range $i, $x := .v }}
{{- include "alertrouter.inlineSecrets" (dict "v" $x "p" (printf "%s[%d]" $p $i) "k" $k) }}
{{- end }}
{{- else if and (kindIs "string" .v) (regexMatch "[A-Za-z][A-Za-z0-9+.-]*://[^/@\\s:]*:[^$/@\\s][^/@\\s]*@" .v) }}
{{ $p }}	credentials in a URL (user:password@)
{{- end }}
{{- end }}

{{/* "true" when a value is an inline secret: a non-empty scalar that is not a ${VAR} reference. */}}
{{- define "alertrouter.isInline" -}}
{{- if kindIs "string" . }}
{{- if and (ne . "") (not (hasPrefix "$" .)) }}true{{ end }}
{{- else if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) }}true
{{- end }}
{{- end }}

{{/*
Bytes of a Kubernetes quantity (512Mi, 1Gi, 500M, 536870912); fails on
anything else.
*/}}
{{- define "alertrouter.quantityBytes" -}}
{{- $q := . }}
{{- if not (kindIs "string" $q) }}{{ $q = toString (int64 $q) }}{{ end }}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$" $q) }}
{{- fail (printf "memory quantity %q: the chart reads plain bytes or Ki, Mi, Gi, Ti, k, M, G, T" $q) }}
{{- end }}
{{- $unit := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- printf "%d" (int64 (mulf (float64 (regexReplaceAll "[A-Za-z]+$" $q "")) (get $unit (regexReplaceAll "^[0-9.]+" $q "")))) }}
{{- end }}

{{/* Bytes of a Redis memory setting (100mb, 1gb, 104857600; k/m/g are powers of 1000). */}}
{{- define "alertrouter.redisBytes" -}}
{{- $v := lower (toString .) }}
{{- if not (regexMatch "^[0-9]+(b|k|kb|m|mb|g|gb)?$" $v) }}
{{- fail (printf "redis.bundled.maxmemory %q: want a Redis memory size such as 100mb" $v) }}
{{- end }}
{{- $unit := dict "" 1 "b" 1 "k" 1000 "kb" 1024 "m" 1000000 "mb" 1048576 "g" 1000000000 "gb" 1073741824 }}
{{- printf "%d" (mul (regexReplaceAll "[a-z]+$" $v "" | int64) (get $unit (regexReplaceAll "^[0-9]+" $v ""))) }}
{{- end }}

{{/*
Checks across values that no single value can make; the Deployment
includes it, so a bad install stops at `helm install`.
*/}}
{{- define "alertrouter.validate" -}}
{{- /* Memory: one webhook's processing peaks at about 16 × its body (the
       body, its decoded alerts and their copies, and the garbage the
       collector has not taken yet; measured at 12-17× for 1-20 MB bodies),
       and max_concurrent of them run at once, over a baseline of 64Mi. */}}
{{- with dig "limits" "memory" "" .Values.resources }}
{{- $wh := default dict $.Values.config.webhook }}
{{- $body := dig "max_body_bytes" 67108864 $wh }}
{{- $conc := dig "max_concurrent" 128 $wh }}
{{- range list $body $conc }}
{{- if not (or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .)) }}
{{- fail (printf "config.webhook: max_body_bytes and max_concurrent must be numbers for the chart to check them against resources.limits.memory, got %v" .) }}
{{- end }}
{{- end }}
{{- $need := add 67108864 (mul 16 (int64 $body) (int64 $conc)) }}
{{- $have := include "alertrouter.quantityBytes" . | int64 }}
{{- if gt (int64 $need) $have }}
{{- fail (printf "resources.limits.memory %v is too small for config.webhook: a webhook's processing peaks at about 16 × its body, so max_concurrent %v × max_body_bytes %v needs 64Mi + 16 × %v × %v = %dMi, and the kernel would OOM-kill the router (every webhook in flight lost) before that: lower config.webhook.max_body_bytes or max_concurrent, or raise the limit (deploy/README.md, section 10)" . $conc (int64 $body) $conc (int64 $body) (div $need 1048576)) }}
{{- end }}
{{- end }}
{{- /* Web config: the kubelet's probes must get through it. */}}
{{- if .Values.webConfig.basic_auth_users }}
{{- $auth := false }}
{{- range .Values.probes.httpHeaders }}{{ if eq (lower (toString .name)) "authorization" }}{{ $auth = true }}{{ end }}{{ end }}
{{- if not $auth }}
{{- fail "webConfig.basic_auth_users guards every path, the probes' /-/healthy and /-/ready included: without an Authorization header in probes.httpHeaders (e.g. [{name: Authorization, value: \"Basic <base64 of user:password>\"}]) every probe gets 401 and the kubelet restarts the pods forever" }}
{{- end }}
{{- end }}
{{- /* The same combinations the router refuses at start
       (config.CheckWebConfig), caught at helm install: basic_auth_users
       guard every path, and a client sends one Authorization header. */}}
{{- with .Values.webConfig.basic_auth_users }}
{{- $users := keys . | sortAlpha }}
{{- $cfg := default dict $.Values.config }}
{{- $auth := default dict $cfg.auth }}
{{- if or $auth.bearer_token $auth.bearer_token_file }}
{{- fail (printf "webConfig.basic_auth_users (%s) cannot work with config.auth.bearer_token_file (or bearer_token): Alertmanager sends one Authorization header, and the web configuration answers its bearer token 401 before the router sees it, so no webhook would arrive (the router refuses this combination at start). Either remove webConfig.basic_auth_users (protect the console with config.console.auth), or drop config.auth's bearer token and give Alertmanager's http_config the basic_auth of a basic_auth_users user" (join ", " $users)) }}
{{- end }}
{{- with $auth.basic_auth }}
{{- if not (has (toString .username) $users) }}
{{- fail (printf "config.auth.basic_auth.username %q is not one of webConfig.basic_auth_users (%s): Alertmanager sends one Authorization header, and the web configuration would answer it 401 (the router refuses this at start). Use one of those users with the same password, or drop one of the two" (toString .username) (join ", " $users)) }}
{{- end }}
{{- end }}
{{- $consoleAuth := dig "console" "auth" dict $cfg }}
{{- if or (dig "bearer_token" "" (default dict $consoleAuth)) (dig "bearer_token_file" "" (default dict $consoleAuth)) }}
{{- fail (printf "config.console.auth with a bearer token cannot work with webConfig.basic_auth_users (%s): a browser sends one Authorization header (the router refuses this at start). Remove basic_auth_users, or make console.auth the basic_auth of one of those users" (join ", " $users)) }}
{{- end }}
{{- with dig "basic_auth" "username" "" (default dict $consoleAuth) }}
{{- if not (has (toString .) $users) }}
{{- fail (printf "config.console.auth.basic_auth.username %q is not one of webConfig.basic_auth_users (%s): a browser sends one Authorization header, so the console would answer everyone 401 (the router refuses this at start). Use one of those users with the same password, or drop one of the two" (toString .) (join ", " $users)) }}
{{- end }}
{{- end }}
{{- range $i, $rcv := default list $cfg.receivers }}
{{- range $j, $s := default list (dig "slack_configs" list (default dict $rcv)) }}
{{- $actions := dig "actions" list (default dict $s) }}
{{- if and (kindIs "slice" $actions) $actions (kindIs "string" (first $actions)) }}
{{- fail (printf "config.receivers[%d].slack_configs[%d].actions: Slack triage cannot work with webConfig.basic_auth_users (%s): Slack's signed requests to /slack/interactions and /slack/commands carry no basic-auth credentials, so every click and command would be answered 401 (the router refuses this at start). Remove basic_auth_users and protect the console with config.console.auth" $i $j (join ", " $users)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- /* extraArgs must not repeat a flag the chart sets: the router refuses a
       repeated flag ("cannot be repeated") and the pods crash-loop; and the
       grace period and probes are computed from the values.
       (--web.listen-address may be repeated: another listener.) */}}
{{- $own := dict "config.file" "config, rendered into router.yml" "web.shutdown-delay" "shutdownDelay" "web.config.file" "webConfig" }}
{{- range .Values.extraArgs }}
{{- $arg := toString . }}
{{- range $flag, $value := $own }}
{{- if or (eq $arg (printf "--%s" $flag)) (hasPrefix (printf "--%s=" $flag) $arg) }}
{{- fail (printf "extraArgs %q: the chart sets --%s itself (from %s), and the router refuses a repeated flag (\"flag '%s' cannot be repeated\"), so the pods would crash-loop: remove it from extraArgs and set %s" $arg $flag $value $flag $value) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* extraVolumes and extraVolumeMounts next to the chart's own. */}}
{{- $ownVolumes := list "config" "secrets" "web-config" "redis-auth" }}
{{- $volumes := list }}
{{- range .Values.extraVolumes }}
{{- if has (toString .name) $ownVolumes }}
{{- fail (printf "extraVolumes: the volume name %q is the chart's own (%s): give it another name" (toString .name) (join ", " $ownVolumes)) }}
{{- end }}
{{- $volumes = append $volumes (toString .name) }}
{{- end }}
{{- $ownMounts := list "/etc/alertrouter/router.yml" "/etc/alertrouter/secrets" "/etc/alertrouter/web" "/etc/alertrouter/redis-auth" }}
{{- range .Values.extraVolumeMounts }}
{{- if has (trimSuffix "/" (toString .mountPath)) $ownMounts }}
{{- fail (printf "extraVolumeMounts: mountPath %s is where the chart mounts its own files (%s): mount elsewhere, e.g. /etc/alertrouter/templates or /etc/alertrouter/tls" (toString .mountPath) (join ", " $ownMounts)) }}
{{- end }}
{{- if not (has (toString .name) (concat $volumes $ownVolumes)) }}
{{- fail (printf "extraVolumeMounts: %s mounts volume %q, which extraVolumes does not define" (toString .mountPath) (toString .name)) }}
{{- end }}
{{- end }}
{{- $clientAuth := toString (dig "tls_server_config" "client_auth_type" "" (default dict .Values.webConfig)) }}
{{- if has $clientAuth (list "RequireAndVerifyClientCert" "RequireAnyClientCert") }}
{{- fail (printf "webConfig.tls_server_config.client_auth_type %s: the kubelet's HTTPS probes present no client certificate, so every probe would fail the TLS handshake and the pods would never be ready (and restart forever). Use VerifyClientCertIfGiven (certificates checked when presented) with console.auth guarding the console, or require client certificates at a proxy in front" $clientAuth) }}
{{- end }}
{{- if and .Values.webConfig.tls_server_config .Values.serviceMonitor.enabled (eq .Values.serviceMonitor.scheme "http") }}
{{- fail "serviceMonitor.scheme http, but webConfig.tls_server_config serves HTTPS only: leave serviceMonitor.scheme empty (https is then automatic) or set https" }}
{{- end }}
{{- end }}
