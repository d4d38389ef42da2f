import { Repo } from './repo.js';

/** Server-wide values generated once and kept (migration 003), such as the bounce-token secret. */
export class SettingsRepo extends Repo {
  get(name: string): Buffer | null {
    const row = this.sql('SELECT value FROM settings WHERE name = ?').get(name) as { value: Buffer } | undefined;
    return row ? row.value : null;
  }

  /** Stores `value` unless the name already has one; returns the value that is kept. */
  getOrCreate(name: string, create: () => Buffer, now: number): Buffer {
    this.sql('INSERT OR IGNORE INTO settings (name, value, created_at) VALUES (?, ?, ?)').run(name, create(), now);
    return this.get(name) as Buffer;
  }
}
