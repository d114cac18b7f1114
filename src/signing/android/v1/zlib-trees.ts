// Huffman coding and block output of reference zlib's trees.c (Jean-loup Gailly, zlib licence),
// ported for zlib-deflate.ts: symbol tallies, dynamic/static tree construction with zlib's exact
// tie-breaking, the stored/static/dynamic block choice, and the LSB-first bit writer. Only the
// default strategy; memLevel 8 sets the symbol buffer size. Hand-written: see zlib-deflate.ts.
import {
  BL_CODES, BL_ORDER, D_CODES, END_BLOCK, EXTRA_DBITS, EXTRA_LBITS, HEAP_SIZE, LITERALS, LIT_BUFSIZE, L_CODES, MAX_BITS, REPZ_11_138,
  REPZ_3_10, REP_3_6, STATIC_BL, STATIC_D, STATIC_L, baseDist, baseLength, dCode, generateCodes, initStaticTables, lengthCode,
  staticDtree, staticLtree, type StaticDesc,
} from './zlib-tables.ts';

export { MAX_MATCH, MIN_MATCH } from './zlib-tables.ts';

/** trees.c state: the symbol buffer of the current block, the trees, and the output bits. */
export class BlockWriter {
  private out: Uint8Array;
  private outLength = 0;
  private bitBuffer = 0;
  private bitCount = 0;
  private readonly dynLtree = new Uint16Array(HEAP_SIZE * 2);
  private readonly dynDtree = new Uint16Array((2 * D_CODES + 1) * 2);
  private readonly blTree = new Uint16Array((2 * BL_CODES + 1) * 2);
  private readonly lMax = { value: 0 };
  private readonly dMax = { value: 0 };
  private readonly blMax = { value: 0 };
  private readonly blCount = new Uint16Array(MAX_BITS + 1);
  private readonly heap = new Int32Array(2 * L_CODES + 1);
  private heapLength = 0;
  private heapMax = 0;
  private readonly depth = new Uint8Array(2 * L_CODES + 1);
  private readonly dBuf = new Uint16Array(LIT_BUFSIZE);
  private readonly lBuf = new Uint8Array(LIT_BUFSIZE);
  private lastLit = 0;
  private optLen = 0;
  private staticLen = 0;

  /** `capacity`: zlib deflateBound for the input; stored blocks cap the output there. */
  constructor(capacity: number) {
    initStaticTables();
    this.out = new Uint8Array(capacity);
    this.initBlock();
  }

  /** The compressed bytes written so far. */
  result(): Buffer {
    return Buffer.from(this.out.buffer, 0, this.outLength);
  }

  // --- output bits (trees.c send_bits, put_short, bi_windup) ---
  private putByte(value: number): void {
    if (this.outLength === this.out.length) {
      const grown = new Uint8Array(this.out.length * 2);
      grown.set(this.out);
      this.out = grown;
    }
    this.out[this.outLength++] = value & 0xff;
  }

  private putShort(value: number): void {
    this.putByte(value);
    this.putByte(value >>> 8);
  }

  private sendBits(value: number, length: number): void {
    if (this.bitCount > 16 - length) {
      this.bitBuffer |= (value << this.bitCount) & 0xffff;
      this.putShort(this.bitBuffer);
      this.bitBuffer = value >>> (16 - this.bitCount);
      this.bitCount += length - 16;
    } else {
      this.bitBuffer |= (value << this.bitCount) & 0xffff;
      this.bitCount += length;
    }
  }

  private sendCode(c: number, tree: Uint16Array): void {
    this.sendBits(tree[c * 2]!, tree[c * 2 + 1]!);
  }

  private windup(): void {
    if (this.bitCount > 8) this.putShort(this.bitBuffer);
    else if (this.bitCount > 0) this.putByte(this.bitBuffer);
    this.bitBuffer = 0;
    this.bitCount = 0;
  }

  // --- trees.c ---
  private initBlock(): void {
    for (let n = 0; n < L_CODES; n++) this.dynLtree[n * 2] = 0;
    for (let n = 0; n < D_CODES; n++) this.dynDtree[n * 2] = 0;
    for (let n = 0; n < BL_CODES; n++) this.blTree[n * 2] = 0;
    this.dynLtree[END_BLOCK * 2] = 1;
    this.optLen = 0;
    this.staticLen = 0;
    this.lastLit = 0;
  }

  /** trees.c _tr_tally: records a literal (dist 0) or a match; true when the block must be flushed. */
  tally(dist: number, lc: number): boolean {
    this.dBuf[this.lastLit] = dist;
    this.lBuf[this.lastLit] = lc;
    this.lastLit++;
    if (dist === 0) {
      this.dynLtree[lc * 2]!++;
    } else {
      dist--;
      this.dynLtree[(lengthCode[lc]! + LITERALS + 1) * 2]!++;
      this.dynDtree[dCode(dist) * 2]!++;
    }
    return this.lastLit === LIT_BUFSIZE - 1;
  }

  private smaller(tree: Uint16Array, n: number, m: number): boolean {
    return tree[n * 2]! < tree[m * 2]! || (tree[n * 2] === tree[m * 2] && this.depth[n]! <= this.depth[m]!);
  }

  private downHeap(tree: Uint16Array, k: number): void {
    const v = this.heap[k]!;
    let j = k << 1;
    while (j <= this.heapLength) {
      if (j < this.heapLength && this.smaller(tree, this.heap[j + 1]!, this.heap[j]!)) j++;
      if (this.smaller(tree, v, this.heap[j]!)) break;
      this.heap[k] = this.heap[j]!;
      k = j;
      j <<= 1;
    }
    this.heap[k] = v;
  }

  private generateBitLengths(tree: Uint16Array, maxCode: number, desc: StaticDesc): void {
    const stree = desc.tree;
    let overflow = 0;
    this.blCount.fill(0);
    tree[this.heap[this.heapMax]! * 2 + 1] = 0;
    let h: number;
    for (h = this.heapMax + 1; h < HEAP_SIZE; h++) {
      const n = this.heap[h]!;
      let bits = tree[tree[n * 2 + 1]! * 2 + 1]! + 1;
      if (bits > desc.maxLength) {
        bits = desc.maxLength;
        overflow++;
      }
      tree[n * 2 + 1] = bits;
      if (n > maxCode) continue;
      this.blCount[bits]!++;
      const xbits = n >= desc.extraBase ? desc.extraBits[n - desc.extraBase]! : 0;
      const f = tree[n * 2]!;
      this.optLen += f * (bits + xbits);
      if (stree !== null) this.staticLen += f * (stree[n * 2 + 1]! + xbits);
    }
    if (overflow === 0) return;
    do {
      let bits = desc.maxLength - 1;
      while (this.blCount[bits] === 0) bits--;
      this.blCount[bits]!--;
      this.blCount[bits + 1]! += 2;
      this.blCount[desc.maxLength]!--;
      overflow -= 2;
    } while (overflow > 0);
    for (let bits = desc.maxLength; bits !== 0; bits--) {
      let n = this.blCount[bits]!;
      while (n !== 0) {
        const m = this.heap[--h]!;
        if (m > maxCode) continue;
        if (tree[m * 2 + 1] !== bits) {
          this.optLen += (bits - tree[m * 2 + 1]!) * tree[m * 2]!;
          tree[m * 2 + 1] = bits;
        }
        n--;
      }
    }
  }

  private buildTree(tree: Uint16Array, desc: StaticDesc, max: { value: number }): void {
    const stree = desc.tree;
    let maxCode = -1;
    this.heapLength = 0;
    this.heapMax = HEAP_SIZE;
    for (let n = 0; n < desc.elems; n++) {
      if (tree[n * 2] !== 0) {
        this.heap[++this.heapLength] = maxCode = n;
        this.depth[n] = 0;
      } else {
        tree[n * 2 + 1] = 0;
      }
    }
    while (this.heapLength < 2) {
      const node = (this.heap[++this.heapLength] = maxCode < 2 ? ++maxCode : 0);
      tree[node * 2] = 1;
      this.depth[node] = 0;
      this.optLen--;
      if (stree !== null) this.staticLen -= stree[node * 2 + 1]!;
    }
    max.value = maxCode;
    for (let n = this.heapLength >> 1; n >= 1; n--) this.downHeap(tree, n);
    let node = desc.elems;
    do {
      const n = this.heap[1]!;
      this.heap[1] = this.heap[this.heapLength--]!;
      this.downHeap(tree, 1);
      const m = this.heap[1]!;
      this.heap[--this.heapMax] = n;
      this.heap[--this.heapMax] = m;
      tree[node * 2] = tree[n * 2]! + tree[m * 2]!;
      this.depth[node] = (this.depth[n]! >= this.depth[m]! ? this.depth[n]! : this.depth[m]!) + 1;
      tree[n * 2 + 1] = tree[m * 2 + 1] = node;
      this.heap[1] = node++;
      this.downHeap(tree, 1);
    } while (this.heapLength >= 2);
    this.heap[--this.heapMax] = this.heap[1]!;
    this.generateBitLengths(tree, maxCode, desc);
    generateCodes(tree, maxCode, this.blCount);
  }

  /** trees.c scan_tree (send = false) and send_tree (send = true) share one run-length walk. */
  private walkTree(tree: Uint16Array, maxCode: number, send: boolean): void {
    let prevLength = -1;
    let nextLength = tree[1]!;
    let count = 0;
    let maxCount = 7;
    let minCount = 4;
    if (nextLength === 0) {
      maxCount = 138;
      minCount = 3;
    }
    if (!send) tree[(maxCode + 1) * 2 + 1] = 0xffff;
    for (let n = 0; n <= maxCode; n++) {
      const currentLength = nextLength;
      nextLength = tree[(n + 1) * 2 + 1]!;
      if (++count < maxCount && currentLength === nextLength) continue;
      if (count < minCount) {
        if (send) do this.sendCode(currentLength, this.blTree); while (--count !== 0);
        else this.blTree[currentLength * 2]! += count;
      } else if (currentLength !== 0) {
        if (currentLength !== prevLength) {
          if (send) {
            this.sendCode(currentLength, this.blTree);
            count--;
          } else {
            this.blTree[currentLength * 2]!++;
          }
        }
        if (send) {
          this.sendCode(REP_3_6, this.blTree);
          this.sendBits(count - 3, 2);
        } else {
          this.blTree[REP_3_6 * 2]!++;
        }
      } else if (count <= 10) {
        if (send) {
          this.sendCode(REPZ_3_10, this.blTree);
          this.sendBits(count - 3, 3);
        } else {
          this.blTree[REPZ_3_10 * 2]!++;
        }
      } else if (send) {
        this.sendCode(REPZ_11_138, this.blTree);
        this.sendBits(count - 11, 7);
      } else {
        this.blTree[REPZ_11_138 * 2]!++;
      }
      count = 0;
      prevLength = currentLength;
      if (nextLength === 0) {
        maxCount = 138;
        minCount = 3;
      } else if (currentLength === nextLength) {
        maxCount = 6;
        minCount = 3;
      } else {
        maxCount = 7;
        minCount = 4;
      }
    }
  }

  private buildBlTree(): number {
    this.walkTree(this.dynLtree, this.lMax.value, false);
    this.walkTree(this.dynDtree, this.dMax.value, false);
    this.buildTree(this.blTree, STATIC_BL, this.blMax);
    let maxIndex: number;
    for (maxIndex = BL_CODES - 1; maxIndex >= 3; maxIndex--) if (this.blTree[BL_ORDER[maxIndex]! * 2 + 1] !== 0) break;
    this.optLen += 3 * (maxIndex + 1) + 5 + 5 + 4;
    return maxIndex;
  }

  private compressBlock(ltree: Uint16Array, dtree: Uint16Array): void {
    for (let i = 0; i < this.lastLit; i++) {
      let dist = this.dBuf[i]!;
      let lc = this.lBuf[i]!;
      if (dist === 0) {
        this.sendCode(lc, ltree);
      } else {
        let code = lengthCode[lc]!;
        this.sendCode(code + LITERALS + 1, ltree);
        let extra = EXTRA_LBITS[code]!;
        if (extra !== 0) {
          lc -= baseLength[code]!;
          this.sendBits(lc, extra);
        }
        dist--;
        code = dCode(dist);
        this.sendCode(code, dtree);
        extra = EXTRA_DBITS[code]!;
        if (extra !== 0) {
          dist -= baseDist[code]!;
          this.sendBits(dist, extra);
        }
      }
    }
    this.sendCode(END_BLOCK, ltree);
  }

  /** trees.c _tr_flush_block: `buf` is the block's start in `window`, or -1 when it slid out. */
  flushBlock(window: Uint8Array, buf: number, storedLength: number, last: boolean): void {
    this.buildTree(this.dynLtree, STATIC_L, this.lMax);
    this.buildTree(this.dynDtree, STATIC_D, this.dMax);
    const maxBlIndex = this.buildBlTree();
    let optLengthBytes = (this.optLen + 3 + 7) >>> 3;
    const staticLengthBytes = (this.staticLen + 3 + 7) >>> 3;
    if (staticLengthBytes <= optLengthBytes) optLengthBytes = staticLengthBytes;
    const lastBit = last ? 1 : 0;
    if (storedLength + 4 <= optLengthBytes && buf !== -1) {
      // Stored block (type 0): header bits, byte-align, LEN, NLEN, raw bytes from the window.
      this.sendBits(lastBit, 3);
      this.windup();
      this.putShort(storedLength);
      this.putShort(~storedLength & 0xffff);
      for (let i = 0; i < storedLength; i++) this.putByte(window[buf + i]!);
    } else if (staticLengthBytes === optLengthBytes) {
      this.sendBits((1 << 1) + lastBit, 3);
      this.compressBlock(staticLtree, staticDtree);
    } else {
      this.sendBits((2 << 1) + lastBit, 3);
      const lcodes = this.lMax.value + 1;
      const dcodes = this.dMax.value + 1;
      const blcodes = maxBlIndex + 1;
      this.sendBits(lcodes - 257, 5);
      this.sendBits(dcodes - 1, 5);
      this.sendBits(blcodes - 4, 4);
      for (let rank = 0; rank < blcodes; rank++) this.sendBits(this.blTree[BL_ORDER[rank]! * 2 + 1]!, 3);
      this.walkTree(this.dynLtree, lcodes - 1, true);
      this.walkTree(this.dynDtree, dcodes - 1, true);
      this.compressBlock(this.dynLtree, this.dynDtree);
    }
    this.initBlock();
    if (last) this.windup();
  }
}
