// The live progress view of a load-balancer pass in a terminal (ink): finished Services scroll
// up as permanent lines, the ones in flight stay at the bottom with what they are doing.
import { Box, Static, Text } from 'ink';
import { describeProgress, type PassProgress, type ServiceProgress } from './progress-model.js';

const SYMBOL: { readonly [K in ServiceProgress['status']]: string } = {
  pending: '·',
  running: '›',
  waiting: '…',
  changed: '✓',
  unchanged: '=',
  failed: '✗',
};

const COLOR: { readonly [K in ServiceProgress['status']]: string | undefined } = {
  pending: 'gray',
  running: 'cyan',
  waiting: 'yellow',
  changed: 'green',
  unchanged: undefined,
  failed: 'red',
};

const finished = (s: ServiceProgress) => s.status === 'changed' || s.status === 'unchanged' || s.status === 'failed';

export function PassProgressView(props: { progress: PassProgress; now: number }) {
  const done = props.progress.services.filter(finished);
  const active = props.progress.services.filter((s) => s.status === 'running' || s.status === 'waiting');
  const pending = props.progress.services.filter((s) => s.status === 'pending').length;
  return (
    <Box flexDirection="column">
      <Static items={done}>
        {(s) => (
          <Text key={s.service} color={COLOR[s.status]}>
            {SYMBOL[s.status]} {describeProgress(s, props.now)}
          </Text>
        )}
      </Static>
      {active.map((s) => (
        <Text key={s.service} color={COLOR[s.status]} wrap="truncate-end">
          {SYMBOL[s.status]} {describeProgress(s, props.now)}
        </Text>
      ))}
      {pending > 0 ? <Text color="gray">{pending} Service(s) queued</Text> : null}
    </Box>
  );
}
