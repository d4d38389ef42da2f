import { rootCertificates } from 'node:tls';
import type { Logger } from '../core/logger.js';
import type { NextHopHost, Route } from '../core/outbound.js';
import { SMTPConnection } from '../mime/nodemailer.js';
import { PolicyRefusal, reportTestingSession } from './mta-sts-session.js';

export interface ConnectionOptions {
  /** Our name in EHLO (`smtp.hostname`). */
  heloName: string;
  /** Connect, greeting and per-reply socket timeout. */
  timeoutMs: number;
  /** Idle connections kept per server for reuse; 0 closes each after its transaction. */
  maxIdlePerHost: number;
  /** How long an idle connection is kept before QUIT. */
  idleMs: number;
  /** Trust anchors beside Node's own for the sessions whose certificate must verify (a test's CA). */
  extraCa?: string[];
  /** Where MTA-STS testing-mode findings are reported (RFC 8461 section 5). */
  logger?: Logger;
}

export interface PooledConnection {
  connection: SMTPConnection;
  /** True when it came from the idle pool: the server may have closed it meanwhile. */
  reused: boolean;
  key: string;
}

interface Idle {
  connection: SMTPConnection;
  timer: NodeJS.Timeout;
}

/**
 * Keeps finished SMTP sessions open per (route, host) so the next batch to the same relay or
 * MX skips TCP, greeting, EHLO and AUTH. A session that failed in any way is closed, never reused.
 */
export class ConnectionPool {
  private readonly idle = new Map<string, Idle[]>();

  constructor(private readonly options: ConnectionOptions) {}

  async acquire(route: Route, host: NextHopHost, options: { fresh?: boolean } = {}): Promise<PooledConnection> {
    const key = `${route.key}|${host.host}`;
    const list = options.fresh ? undefined : this.idle.get(key);
    while (list && list.length > 0) {
      const entry = list.pop() as Idle;
      clearTimeout(entry.timer);
      if (!entry.connection.destroyed) return { connection: entry.connection, reused: true, key };
    }
    return { connection: await this.open(route, host), reused: false, key };
  }

  release(pooled: PooledConnection): void {
    const list = this.idle.get(pooled.key) ?? [];
    if (pooled.connection.destroyed || list.length >= this.options.maxIdlePerHost) {
      pooled.connection.quit();
      return;
    }
    const timer = setTimeout(() => this.expire(pooled.key, pooled.connection), this.options.idleMs);
    timer.unref();
    list.push({ connection: pooled.connection, timer });
    this.idle.set(pooled.key, list);
  }

  discard(pooled: PooledConnection): void {
    pooled.connection.close();
  }

  async closeAll(): Promise<void> {
    for (const list of this.idle.values()) {
      for (const entry of list) {
        clearTimeout(entry.timer);
        entry.connection.quit();
      }
    }
    this.idle.clear();
  }

  private expire(key: string, connection: SMTPConnection): void {
    const list = this.idle.get(key) ?? [];
    const index = list.findIndex((entry) => entry.connection === connection);
    if (index >= 0) list.splice(index, 1);
    connection.quit();
  }

  /**
   * Direct MX: opportunistic STARTTLS without certificate checks (RFC 7435; most MX
   * certificates do not match their names), unless the domain's MTA-STS policy is in force:
   * then STARTTLS is required and the certificate must verify for the MX name (RFC 8461
   * section 4.2). Relay: the certificate must verify.
   */
  private open(route: Route, host: NextHopHost): Promise<SMTPConnection> {
    const enforced = route.mtaSts?.mode === 'enforce';
    const connection = new SMTPConnection({
      host: host.host,
      port: route.port,
      secure: route.secure,
      name: this.options.heloName,
      connectionTimeout: this.options.timeoutMs,
      greetingTimeout: this.options.timeoutMs,
      socketTimeout: this.options.timeoutMs,
      logger: false,
      requireTLS: enforced,
      tls: {
        servername: host.servername,
        rejectUnauthorized: route.kind === 'relay' || enforced,
        ...(this.options.extraCa && { ca: [...rootCertificates, ...this.options.extraCa] }),
      },
    });
    // A late error on an idle session must not crash the process; the session is then dropped.
    connection.on('error', () => {});
    return new Promise((resolve, reject) => {
      // nodemailer reports a failed connect or greeting only as an 'error' or 'end' event.
      const fail = (error: Error) => {
        connection.off('error', fail);
        connection.off('end', ended);
        connection.close();
        reject(enforced ? new PolicyRefusal(route, host, error) : error);
      };
      const ended = () => fail(Object.assign(new Error('Connection closed before the session started'), { code: 'ECONNECTION' }));
      connection.once('error', fail);
      connection.once('end', ended);
      const ready = () => {
        connection.off('error', fail);
        connection.off('end', ended);
        reportTestingSession(connection, route, host, this.options.logger);
        resolve(connection);
      };
      connection.connect(() => {
        if (!route.auth) return ready();
        connection.login({ credentials: route.auth }, (authError) => (authError ? fail(authError) : ready()));
      });
    });
  }
}
