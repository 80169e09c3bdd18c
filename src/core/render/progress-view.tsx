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

/** `color` false (--no-color, NO_COLOR): the same view without colour codes. */
export function PassProgressView(props: { progress: PassProgress; now: number; color: boolean }) {
  const colorOf = (s: ServiceProgress) => (props.color ? COLOR[s.status] : undefined);
  const done = props.progress.services.filter(finished);
  const active = props.progress.services.filter((s) => s.status === 'running' || s.status === 'waiting');
  const pending = props.progress.services.filter((s) => s.status === 'pending').length;
  return (
    <Box flexDirection="column">
      <Static items={done}>
        {(s) => (
          <Text key={s.service} color={colorOf(s)}>
            {SYMBOL[s.status]} {describeProgress(s, props.now)}
          </Text>
        )}
      </Static>
      {active.map((s) => (
        <Text key={s.service} color={colorOf(s)} wrap="truncate-end">
          {SYMBOL[s.status]} {describeProgress(s, props.now)}
        </Text>
      ))}
      {pending > 0 ? <Text color={props.color ? 'gray' : undefined}>{pending} Service(s) queued</Text> : null}
    </Box>
  );
}
