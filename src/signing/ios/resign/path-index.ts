// Zip paths under a folder, for the per-bundle questions of signing and verifying (which files
// does this bundle seal, are they hashed yet). The paths with a given prefix form one run of the
// sorted list (UTF-16 code-unit order, which is what `<` and the default sort compare), found by
// binary search: O(log n + k) per bundle instead of a pass over every path of the app for each of
// its bundles, which grows as bundles × files (an app with 60 frameworks and 10,000 files).
export class PathIndex {
  private readonly sorted: readonly string[];

  constructor(paths: Iterable<string>) {
    this.sorted = [...paths].sort();
  }

  /** The paths starting with `dir` (a folder path ending in "/"), in sorted order. */
  under(dir: string): string[] {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sorted[middle]! < dir) low = middle + 1;
      else high = middle;
    }
    const found: string[] = [];
    for (let i = low; i < this.sorted.length && this.sorted[i]!.startsWith(dir); i++) found.push(this.sorted[i]!);
    return found;
  }
}
