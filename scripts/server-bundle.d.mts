// Types of server-bundle.mjs (plain JavaScript, so that bin/signet can load it before any TypeScript).
export declare const SERVER_BUNDLE_DIR: string;
export declare const SOURCES_FILE: string;
export interface ServerBuildRecord {
  readonly build: string;
  readonly sources: Readonly<Record<string, readonly [size: number, mtimeMs: number]>>;
}
export declare function currentServerBuild(root: URL): ServerBuildRecord | null;
export declare function freshServerBundle(root: URL): URL | null;
