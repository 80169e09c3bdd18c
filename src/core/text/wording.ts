// Counted nouns for output lines ("1 node", "2 nodes", "1 address"), for every floor that words a message.

/** `count` and the noun in the number it needs; `plural` defaults to the noun with an s. */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
