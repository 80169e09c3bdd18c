// The Prometheus text exposition format (version 0.0.4), the format a Pushgateway accepts and
// node_exporter's textfile collector reads: `# HELP`, `# TYPE`, then one sample per line.
// Label values and help texts are escaped as the format requires; names are checked, since a
// bad name makes the whole scrape or push fail.

export type MetricType = 'gauge' | 'counter' | 'histogram';

export interface Sample {
  /** Defaults to the family's name; histograms use `<name>_bucket`, `_sum`, `_count`. */
  readonly name?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The families as one exposition text; families without samples are left out. */
export function renderExposition(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (family.samples.length === 0) continue;
    checkName(family.name, METRIC_NAME, 'metric');
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) lines.push(sampleLine(sample.name ?? family.name, sample));
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function sampleLine(name: string, sample: Sample): string {
  checkName(name, METRIC_NAME, 'metric');
  const labels = Object.entries(sample.labels ?? {});
  for (const [label] of labels) checkName(label, LABEL_NAME, 'label');
  const labelText = labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
  return `${name}${labelText} ${formatValue(sample.value)}`;
}

/** Backslash, double quote and line feed are escaped in label values. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Backslash and line feed are escaped in help texts. */
function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function checkName(name: string, pattern: RegExp, what: string): void {
  // Names come from this tool's code, never from input: a bad one is a bug.
  if (!pattern.test(name)) throw new Error(`invalid Prometheus ${what} name "${name}"`);
}

/**
 * The samples of a histogram over `values` (cumulative `le` buckets, `+Inf`, sum and count),
 * each carrying `labels`.
 */
export function histogramSamples(
  name: string,
  buckets: readonly number[],
  values: readonly number[],
  labels: Readonly<Record<string, string>> = {},
): Sample[] {
  const samples: Sample[] = buckets.map((bound) => ({
    name: `${name}_bucket`,
    labels: { ...labels, le: formatValue(bound) },
    value: values.filter((v) => v <= bound).length,
  }));
  samples.push(
    { name: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: values.length },
    { name: `${name}_sum`, labels, value: values.reduce((sum, v) => sum + v, 0) },
    { name: `${name}_count`, labels, value: values.length },
  );
  return samples;
}
