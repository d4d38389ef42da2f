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
