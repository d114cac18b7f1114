// What bench:ipa and bench:apk share about their interleaved rounds.

/**
 * Two rows run back to back, the order alternating from round to round, so that neither always
 * follows the same row (whatever a row leaves behind - page cache, freed memory, writeback -
 * falls on each in turn).
 */
export async function inTurn<A, B>(round: number, a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  if (round % 2 === 0) {
    const first = await a();
    return [first, await b()];
  }
  const second = await b();
  return [await a(), second];
}

/** The middle value of a row's rounds (the upper one of an even count). */
export function middleOf(values: number[]): number {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
}
