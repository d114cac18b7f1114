// Raw deflate that reproduces reference zlib's output bit for bit at level 9 (memLevel 8, 32 KiB
// window, default strategy, whole input then Z_FINISH) - what apksig's ZipUtils.deflate gets from
// Java's Deflater(9, nowrap=true). Node's zlib is Chromium's fork, whose match finder differs, so
// its bytes differ and apksigner-identical output would be impossible. Hand-written port of
// zlib 1.2.x deflate.c (deflate_slow, longest_match, fill_window) and trees.c (Jean-loup Gailly
// and Mark Adler, zlib licence), specialised to the one configuration apksig uses. Only the
// three small META-INF files go through it; it is not meant for bulk data.
import { BlockWriter, MAX_MATCH, MIN_MATCH } from './zlib-trees.ts';

const W_BITS = 15;
const W_SIZE = 1 << W_BITS;
const W_MASK = W_SIZE - 1;
const WINDOW_SIZE = 2 * W_SIZE;
const HASH_BITS = 8 + 7; // memLevel 8
const HASH_SIZE = 1 << HASH_BITS;
const HASH_MASK = HASH_SIZE - 1;
const HASH_SHIFT = Math.floor((HASH_BITS + MIN_MATCH - 1) / MIN_MATCH);
const MIN_LOOKAHEAD = MAX_MATCH + MIN_MATCH + 1;
const MAX_DIST = W_SIZE - MIN_LOOKAHEAD;
const TOO_FAR = 4096;
// deflate.c configuration_table[9]: good_length, max_lazy, nice_length, max_chain.
const GOOD_MATCH = 32;
const MAX_LAZY_MATCH = 258;
const NICE_MATCH = 258;
const MAX_CHAIN = 4096;

class Deflater {
  private readonly blocks: BlockWriter;
  private readonly input: Uint8Array;
  private inputPosition = 0;
  private readonly window = new Uint8Array(WINDOW_SIZE);
  private readonly prev = new Uint16Array(W_SIZE);
  private readonly head = new Uint16Array(HASH_SIZE);
  private insH = 0;
  private blockStart = 0;
  private matchLength = MIN_MATCH - 1;
  private prevMatch = 0;
  private matchAvailable = false;
  private strstart = 0;
  private matchStart = 0;
  private lookahead = 0;
  private prevLength = MIN_MATCH - 1;
  private insert = 0;

  constructor(input: Uint8Array) {
    this.input = input;
    // zlib deflateBound for raw deflate: the output never needs more (stored blocks cap it).
    this.blocks = new BlockWriter(input.length + (input.length >>> 12) + (input.length >>> 14) + (input.length >>> 25) + 64);
  }

  run(): Buffer {
    this.deflateSlow();
    return this.blocks.result();
  }

  // --- deflate.c ---
  private fillWindow(): void {
    do {
      let more = WINDOW_SIZE - this.lookahead - this.strstart;
      if (this.strstart >= W_SIZE + MAX_DIST) {
        this.window.copyWithin(0, W_SIZE, W_SIZE + W_SIZE);
        this.matchStart -= W_SIZE;
        this.strstart -= W_SIZE;
        this.blockStart -= W_SIZE;
        for (let n = 0; n < HASH_SIZE; n++) {
          const m = this.head[n]!;
          this.head[n] = m >= W_SIZE ? m - W_SIZE : 0;
        }
        for (let n = 0; n < W_SIZE; n++) {
          const m = this.prev[n]!;
          this.prev[n] = m >= W_SIZE ? m - W_SIZE : 0;
        }
        more += W_SIZE;
      }
      const available = this.input.length - this.inputPosition;
      if (available === 0) break;
      const n = Math.min(available, more);
      this.window.set(this.input.subarray(this.inputPosition, this.inputPosition + n), this.strstart + this.lookahead);
      this.inputPosition += n;
      this.lookahead += n;
      if (this.lookahead + this.insert >= MIN_MATCH) {
        let str = this.strstart - this.insert;
        this.insH = this.window[str]!;
        this.insH = ((this.insH << HASH_SHIFT) ^ this.window[str + 1]!) & HASH_MASK;
        while (this.insert) {
          this.insH = ((this.insH << HASH_SHIFT) ^ this.window[str + MIN_MATCH - 1]!) & HASH_MASK;
          this.prev[str & W_MASK] = this.head[this.insH]!;
          this.head[this.insH] = str;
          str++;
          this.insert--;
          if (this.lookahead + this.insert < MIN_MATCH) break;
        }
      }
    } while (this.lookahead < MIN_LOOKAHEAD && this.inputPosition < this.input.length);
  }

  /** deflate.c longest_match; the caller passes its hot state, the result is the match length. */
  private longestMatch(curMatch: number, strstart: number, prevLength: number, lookahead: number): number {
    let chainLength = MAX_CHAIN;
    let scan = strstart;
    let bestLength = prevLength;
    let niceMatch = NICE_MATCH;
    const limit = strstart > MAX_DIST ? strstart - MAX_DIST : 0;
    const win = this.window;
    const prev = this.prev;
    const strend = strstart + MAX_MATCH;
    let scanEnd1 = win[scan + bestLength - 1];
    let scanEnd = win[scan + bestLength];
    if (prevLength >= GOOD_MATCH) chainLength >>= 2;
    if (niceMatch > lookahead) niceMatch = lookahead;
    do {
      let match = curMatch;
      if (win[match + bestLength] !== scanEnd || win[match + bestLength - 1] !== scanEnd1 || win[match] !== win[scan] || win[++match] !== win[scan + 1]) continue;
      scan += 2;
      match++;
      do {
        // Compare up to MAX_MATCH bytes; reads past the data see zeros or stale bytes, which
        // zlib tolerates because the length is capped by lookahead below.
      } while (win[++scan] === win[++match] && win[++scan] === win[++match] && win[++scan] === win[++match] && win[++scan] === win[++match] &&
        win[++scan] === win[++match] && win[++scan] === win[++match] && win[++scan] === win[++match] && win[++scan] === win[++match] && scan < strend);
      const length = MAX_MATCH - (strend - scan);
      scan = strend - MAX_MATCH;
      if (length > bestLength) {
        this.matchStart = curMatch;
        bestLength = length;
        if (length >= niceMatch) break;
        scanEnd1 = win[scan + bestLength - 1];
        scanEnd = win[scan + bestLength];
      }
    } while ((curMatch = prev[curMatch & W_MASK]!) > limit && --chainLength !== 0);
    return bestLength <= lookahead ? bestLength : lookahead;
  }

  private flushBlock(last: boolean): void {
    this.blocks.flushBlock(this.window, this.blockStart >= 0 ? this.blockStart : -1, this.strstart - this.blockStart, last);
    this.blockStart = this.strstart;
  }

  /**
   * deflate.c deflate_slow (lazy matching). Hot state lives in locals and is written back to the
   * fields around the calls that read it (fillWindow, flushBlock) - a large speed-up for a cold
   * JIT, which is how this runs (once per signing).
   */
  private deflateSlow(): void {
    const win = this.window;
    const prev = this.prev;
    const head = this.head;
    let strstart = this.strstart;
    let lookahead = this.lookahead;
    let insH = this.insH;
    let matchLength = this.matchLength;
    let prevLength = this.prevLength;
    let prevMatch = this.prevMatch;
    let matchAvailable = this.matchAvailable;
    const save = (): void => {
      this.strstart = strstart;
      this.lookahead = lookahead;
      this.insH = insH;
    };
    const load = (): void => {
      strstart = this.strstart;
      lookahead = this.lookahead;
      insH = this.insH;
    };
    for (;;) {
      if (lookahead < MIN_LOOKAHEAD) {
        save();
        this.fillWindow();
        load();
        if (lookahead === 0) break;
      }
      let hashHead = 0;
      if (lookahead >= MIN_MATCH) {
        insH = ((insH << HASH_SHIFT) ^ win[strstart + MIN_MATCH - 1]!) & HASH_MASK;
        hashHead = head[insH]!;
        prev[strstart & W_MASK] = hashHead;
        head[insH] = strstart;
      }
      prevLength = matchLength;
      prevMatch = this.matchStart;
      matchLength = MIN_MATCH - 1;
      if (hashHead !== 0 && prevLength < MAX_LAZY_MATCH && strstart - hashHead <= MAX_DIST) {
        matchLength = this.longestMatch(hashHead, strstart, prevLength, lookahead);
        if (matchLength <= 5 && matchLength === MIN_MATCH && strstart - this.matchStart > TOO_FAR) matchLength = MIN_MATCH - 1;
      }
      if (prevLength >= MIN_MATCH && matchLength <= prevLength) {
        const maxInsert = strstart + lookahead - MIN_MATCH;
        const flush = this.blocks.tally(strstart - 1 - prevMatch, prevLength - MIN_MATCH);
        lookahead -= prevLength - 1;
        prevLength -= 2;
        do {
          if (++strstart <= maxInsert) {
            insH = ((insH << HASH_SHIFT) ^ win[strstart + MIN_MATCH - 1]!) & HASH_MASK;
            prev[strstart & W_MASK] = head[insH]!;
            head[insH] = strstart;
          }
        } while (--prevLength !== 0);
        matchAvailable = false;
        matchLength = MIN_MATCH - 1;
        strstart++;
        if (flush) {
          save();
          this.flushBlock(false);
        }
      } else if (matchAvailable) {
        if (this.blocks.tally(0, win[strstart - 1]!)) {
          save();
          this.flushBlock(false);
        }
        strstart++;
        lookahead--;
      } else {
        matchAvailable = true;
        strstart++;
        lookahead--;
      }
    }
    if (matchAvailable) this.blocks.tally(0, win[strstart - 1]!);
    this.matchLength = matchLength;
    this.prevLength = prevLength;
    this.prevMatch = prevMatch;
    this.matchAvailable = false;
    this.insert = strstart < MIN_MATCH - 1 ? strstart : MIN_MATCH - 1;
    save();
    this.flushBlock(true);
  }
}

/** Raw deflate of `data` exactly as zlib level 9 (Java Deflater(9, true)) produces it. */
export function zlibDeflateRawLevel9(data: Uint8Array): Buffer {
  return new Deflater(data).run();
}
