/**
 * The password KDF the owners service uses. src/app/core.ts supplies @node-rs/argon2 (the executable
 * loads its addon from an asset, as it does better-sqlite3's), so services never load a
 * native addon themselves.
 */
export interface Argon2Binding {
  hash(password: string, options: Argon2Options): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
}

/** The options of @node-rs/argon2 that we set; `algorithm` 2 is Argon2id. */
export interface Argon2Options {
  algorithm: 2;
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** Loads the binding on first use, so a process that never hashes a password never loads it. */
export type Argon2Loader = () => Promise<Argon2Binding>;
