// The live progress view of a load-balancer pass in a terminal (ink): finished Services scroll
// up as permanent lines, the ones in flight stay at the bottom with what they are doing.
import { Box, Static, Text } from 'ink';
import { counted } from '../text/wording.js';
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

/** `color` false (--no-color, NO_COLOR): the same view without colour codes. */
export function PassProgressView(props: { progress: PassProgress; now: number; color: boolean }) {
  const colorOf = (s: ServiceProgress) => (props.color ? COLOR[s.status] : undefined);
  const active = props.progress.services.filter((s) => s.status === 'running' || s.status === 'waiting');
  const pending = props.progress.services.filter((s) => s.status === 'pending').length;
  return (
    <Box flexDirection="column">
      {/* Static prints the items appended since its last frame, by position: the list must only grow. */}
      <Static items={[...props.progress.finished]}>
        {(s, index) => (
          <Text key={index} color={colorOf(s)}>
            {SYMBOL[s.status]} {describeProgress(s, props.now)}
          </Text>
        )}
      </Static>
      {active.map((s) => (
        <Text key={s.service} color={colorOf(s)} wrap="truncate-end">
          {SYMBOL[s.status]} {describeProgress(s, props.now)}
        </Text>
      ))}
      {pending > 0 ? <Text color={props.color ? 'gray' : undefined}>{counted(pending, 'Service')} queued</Text> : null}
    </Box>
  );
}
