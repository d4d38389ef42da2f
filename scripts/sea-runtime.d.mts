/** The packaging Node of the single executable (scripts/sea-runtime.mjs). */
export interface PackagingNode {
  binary: string;
  nodedir: string;
  version: string;
}

export const RUNTIME_MAJOR: number;
export function packagingNode(): PackagingNode;
/** better-sqlite3's addon compiled for the packaging Node (kept in dist/addon); returns its path. */
export function addonFor(node: PackagingNode, root: string, log: (line: string) => void): string;
/** native/heap-trim.c compiled for the packaging Node (dist/addon/heap_trim.node); returns its path. */
export function heapTrimAddonFor(node: PackagingNode, root: string): string;
