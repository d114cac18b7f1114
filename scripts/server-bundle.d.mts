// Types of server-bundle.mjs (plain JavaScript, so that bin/signet can load it before any TypeScript).
export declare const SERVER_BUNDLE_DIR: string;
export declare const SOURCES_FILE: string;
export declare function freshServerBundle(root: URL): URL | null;
