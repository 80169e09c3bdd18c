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
