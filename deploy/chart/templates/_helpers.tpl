{{/*
The label every object carries, as in `cloudscale-ccm manifests`. No Helm labels are added, so
the chart renders the very objects the manifests do.
*/}}
{{- define "cloudscale-ccm.labels" -}}
app.kubernetes.io/name: cloudscale-ccm
{{- end }}

{{/*
The container image: .Values.image, else the name podman gives a local build of this version.
*/}}
{{- define "cloudscale-ccm.image" -}}
{{- .Values.image | default (printf "localhost/cloudscale-ccm:%s" .Chart.AppVersion) -}}
{{- end }}

{{/*
Refuses the values `cloudscale-ccm manifests` refuses for the same flags, before anything is
sent to the cluster, each with the value's name and how to fix it. values.schema.json has
checked the types and that no unknown value is set.
*/}}
{{- define "cloudscale-ccm.validate" -}}
{{- if not (regexMatch "^\\S*$" .Values.image) }}
{{- fail (printf "image %q is not an image reference: give one without spaces, e.g. --set image=registry.example.com/cloudscale-ccm:%s" .Values.image .Chart.AppVersion) }}
{{- end }}
{{- include "cloudscale-ccm.validateSchedule" (trim .Values.schedule) }}
{{- $host := .Values.apiServer.host }}
{{- if and (not (kindIs "invalid" .Values.apiServer.port)) (eq $host "") }}
{{- fail "apiServer.port needs apiServer.host: set apiServer.host to an address the API server certificate names" }}
{{- end }}
{{- if and (ne $host "") (not (regexMatch "^([0-9A-Fa-f.]*:[0-9A-Fa-f:.]*|[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)$" $host)) }}
{{- fail (printf "apiServer.host %q is neither an IP address nor a DNS name: give the host only, without scheme or port, e.g. --set apiServer.host=10.0.0.10" $host) }}
{{- end }}
{{- if gt (len $host) 253 }}
{{- fail (printf "apiServer.host %q is longer than a DNS name may be (253 characters)" $host) }}
{{- end }}
{{- end }}

{{/*
The cron grammar the CronJob controller accepts, as `manifests --schedule` checks it
(src/core/deploy/cron.ts): five fields of lists, ranges and steps, month and weekday names,
? as *, or an @hourly-style macro. A range that ends before it starts is left to the API server.
*/}}
{{- define "cloudscale-ccm.validateSchedule" -}}
{{- $schedule := . }}
{{- $hint := "give five cron fields, minute hour day-of-month month day-of-week, e.g. --set schedule='*/2 * * * *'" }}
{{- if eq $schedule "" }}
{{- fail (printf "schedule is empty: %s" $hint) }}
{{- else if regexMatch "^(CRON_)?TZ=" $schedule }}
{{- fail (printf "schedule %q: time zones are not accepted in the schedule (the CronJob runs in the controller-manager time zone)" $schedule) }}
{{- else if hasPrefix "@" $schedule }}
{{- if not (has (lower $schedule) (list "@yearly" "@annually" "@monthly" "@weekly" "@daily" "@midnight" "@hourly")) }}
{{- fail (printf "schedule %q: unknown macro (accepted: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)" $schedule) }}
{{- end }}
{{- else }}
{{- $parts := regexSplit "\\s+" $schedule -1 }}
{{- if ne (len $parts) 5 }}
{{- fail (printf "schedule %q: expected 5 fields (minute hour day-of-month month day-of-week), got %d: %s" $schedule (len $parts) $hint) }}
{{- end }}
{{- $fields := list
  (list "minute" "0*([0-9]|[1-5][0-9])" "0–59")
  (list "hour" "0*([0-9]|1[0-9]|2[0-3])" "0–23")
  (list "day-of-month" "0*([1-9]|[12][0-9]|3[01])" "1–31")
  (list "month" "(0*([1-9]|1[0-2])|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))" "1–12 or JAN–DEC")
  (list "day-of-week" "(0*[0-6]|(?i:sun|mon|tue|wed|thu|fri|sat))" "0–6 or SUN–SAT") }}
{{- range $index, $field := $fields }}
{{- $value := index $field 1 }}
{{- $item := printf "(\\*|\\?|%s(-%s)?)(/[1-9][0-9]*)?" $value $value }}
{{- $part := index $parts $index }}
{{- if not (regexMatch (printf "^%s(,%s)*$" $item $item) $part) }}
{{- fail (printf "schedule %q: %s field %q is not a list of values in %s, *, ? or ranges a-b, each with an optional step /n: %s" $schedule (index $field 0) $part (index $field 2) $hint) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Seconds of a duration as `run` reads it (src/core/duration.ts): 90s, 5m, 1h30m, 500ms, 2d, not
negative, a unit on every number. Fails naming the value. Argument: (list VALUE_NAME TEXT).
*/}}
{{- define "cloudscale-ccm.durationSeconds" -}}
{{- $name := index . 0 }}
{{- $text := trim (toString (index . 1)) }}
{{- $hint := "write a duration like 0s, 15s, 2m or 1h30m (hours, minutes, seconds; not negative)" }}
{{- if hasPrefix "-" $text }}
{{- fail (printf "%s %q: a negative duration: %s" $name $text $hint) }}
{{- else if regexMatch "^[0-9]+(\\.[0-9]+)?$" $text }}
{{- fail (printf "%s %q has no unit: %s" $name $text $hint) }}
{{- else if not (regexMatch "^([0-9]+(\\.[0-9]+)?(ms|s|m|h|d))+$" $text) }}
{{- fail (printf "%s %q is not a duration: %s" $name $text $hint) }}
{{- end }}
{{- $unitMs := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 }}
{{- $ms := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)" $text -1 }}
{{- $unit := regexFind "(ms|s|m|h|d)$" . }}
{{- $ms = addf $ms (mulf (float64 (trimSuffix $unit .)) (get $unitMs $unit)) }}
{{- end }}
{{- divf $ms 1000 }}
{{- end }}

{{/*
A number of seconds the way `manifests` writes a budget (formatSeconds in src/core/lb/budget.ts):
1h30m, 1m30s, 0.5s, 0s.
*/}}
{{- define "cloudscale-ccm.formatSeconds" -}}
{{- $seconds := float64 . }}
{{- $hours := floor (divf $seconds 3600) }}
{{- $minutes := floor (divf (subf $seconds (mulf $hours 3600)) 60) }}
{{- $rest := subf $seconds (addf (mulf $hours 3600) (mulf $minutes 60)) }}
{{- if gt $hours 0.0 }}{{ int64 $hours }}h{{ end }}
{{- if gt $minutes 0.0 }}{{ int64 $minutes }}m{{ end }}
{{- if or (gt $rest 0.0) (eq $seconds 0.0) }}{{ $rest }}s{{ end }}
{{- end }}

{{/*
The window as `run --window` takes it (parseWindow in src/core/lb/budget-window.ts):
"DAYS HH:MM-HH:MM ZONE=DURATION". The time zone is left to `run`: a template cannot tell a
zone name from a typo, so check a new window with `cloudscale-ccm manifests --window …` once.
*/}}
{{- define "cloudscale-ccm.validateWindow" -}}
{{- $window := . }}
{{- $hint := "write the window as \"DAYS HH:MM-HH:MM ZONE=DURATION\", e.g. \"Mon-Fri 02:00-04:00 Europe/Zurich=5m\" (DAYS: Mon,Tue,…,Sun, ranges like Mon-Fri, or daily)" }}
{{- $parts := regexFindAll "[^\\s=]+" $window -1 }}
{{- if not (regexMatch "^\\s*\\S+\\s+[0-9]{1,2}:[0-9]{2}-[0-9]{1,2}:[0-9]{2}\\s+[^=\\s]+\\s*=\\s*\\S+\\s*$" $window) }}
{{- fail (printf "window %q: not a window: %s" $window $hint) }}
{{- end }}
{{- $days := lower (index $parts 0) }}
{{- $day := "(sun|mon|tue|wed|thu|fri|sat)" }}
{{- if not (or (eq $days "daily") (regexMatch (printf "^%s(-%s)?(,%s(-%s)?)*$" $day $day $day $day) $days)) }}
{{- fail (printf "window %q: unknown days %q: %s" $window (index $parts 0) $hint) }}
{{- end }}
{{- $times := regexSplit "[:-]" (index $parts 1) -1 }}
{{- $start := add (mul (atoi (index $times 0)) 60) (atoi (index $times 1)) }}
{{- $end := add (mul (atoi (index $times 2)) 60) (atoi (index $times 3)) }}
{{- if or (gt (atoi (index $times 0)) 23) (gt (atoi (index $times 1)) 59) (gt (atoi (index $times 2)) 24) (gt (atoi (index $times 3)) 59) (gt $end 1440) }}
{{- fail (printf "window %q: not a time of day: %s" $window $hint) }}
{{- end }}
{{- if eq $start $end }}
{{- fail (printf "window %q: the window is empty (start and end are the same): %s" $window $hint) }}
{{- end }}
{{- $_ := include "cloudscale-ccm.durationSeconds" (list "window (budget after =)" (index $parts 3)) }}
{{- end }}

{{/*
The arguments of `run` in each Job, as `manifests` writes them: the watch (watchFor), the budget
(maxDowntime, window) and the Pushgateway.
*/}}
{{- define "cloudscale-ccm.runArgs" -}}
{{- $args := list "run" "--wait" }}
{{- $watchFor := trim (toString .Values.watchFor) }}
{{- $watchSeconds := 0.0 }}
{{- if ne $watchFor "0" }}
{{- $watchSeconds = float64 (include "cloudscale-ccm.durationSeconds" (list "watchFor" $watchFor)) }}
{{- end }}
{{- if or (ne $watchSeconds (floor $watchSeconds)) (ge $watchSeconds 3600.0) }}
{{- fail (printf "watchFor takes whole seconds under an hour, got %v s: e.g. --set watchFor=50s with the default one-minute schedule; 0 runs one pass per Job" $watchSeconds) }}
{{- end }}
{{- if gt $watchSeconds 0.0 }}
{{- $args = concat $args (list "--watch-for" (printf "%ds" (int64 $watchSeconds))) }}
{{- end }}
{{- $args = concat $args (list "--max-downtime" (include "cloudscale-ccm.formatSeconds" (include "cloudscale-ccm.durationSeconds" (list "maxDowntime" .Values.maxDowntime)))) }}
{{- with trim .Values.window }}
{{- include "cloudscale-ccm.validateWindow" . }}
{{- $args = concat $args (list "--window" .) }}
{{- end }}
{{- with .Values.pushgateway }}
{{- if not (regexMatch "^(?i:https?)://[^\\s/?#]+[^\\s?#]*$" .) }}
{{- fail (printf "pushgateway %q must be an http:// or https:// URL without query or fragment, e.g. --set pushgateway=http://pushgateway.monitoring:9091" .) }}
{{- end }}
{{- $args = concat $args (list "--pushgateway" .) }}
{{- end }}
{{- toJson $args }}
{{- end }}

{{/*
The admission policy of load-balancer annotations (manifests --admission-policy): deny, warn or
none, as `manifests` takes it. templates/admission-policy.yaml is generated and uses this.
*/}}
{{- define "cloudscale-ccm.admissionPolicy" -}}
{{- $mode := trim (toString .Values.admissionPolicy) }}
{{- if not (has $mode (list "deny" "warn" "none")) }}
{{- fail (printf "admissionPolicy %q is not one of the allowed choices deny, warn, none: e.g. --set admissionPolicy=warn to only warn at kubectl apply" $mode) }}
{{- end }}
{{- $mode }}
{{- end }}
