import { Secret, TOTP } from 'otpauth';
import type { TestApp } from './app.js';

/** Issues a limited access key with the full key; fails the test setup on anything but 201. */
export const issueAccessKey = async (app: TestApp, fullKey: string, body: Record<string, unknown>): Promise<{ id: string; apiKey: string }> => {
  const response = await app.api('POST', '/api/v1/agent/access-keys', { key: fullKey, body });
  if (response.status !== 201) throw new Error(`access key not issued: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; apiKey: string };
};

/** The TOTP an authenticator app would build from the enroll response's otpauthUrl. */
export const totpFromUrl = (otpauthUrl: string): TOTP => {
  const url = new URL(otpauthUrl);
  return new TOTP({
    secret: Secret.fromBase32(url.searchParams.get('secret') ?? ''),
    algorithm: url.searchParams.get('algorithm') ?? 'SHA1',
    digits: Number(url.searchParams.get('digits') ?? 6),
    period: Number(url.searchParams.get('period') ?? 30),
  });
};

/** Enrolls and confirms two-factor; returns the TOTP to generate further codes. */
export const enableTwoFactor = async (app: TestApp, fullKey: string, at: () => number): Promise<TOTP> => {
  const enrolled = await app.api('POST', '/api/v1/agent/2fa', { key: fullKey, body: { action: 'enroll' } });
  if (enrolled.status !== 200) throw new Error(`enroll failed: ${enrolled.status}`);
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  const confirmed = await app.api('POST', '/api/v1/agent/2fa', {
    key: fullKey,
    body: { action: 'confirm', factorCode: totp.generate({ timestamp: at() }) },
  });
  if (confirmed.status !== 200) throw new Error(`confirm failed: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  return totp;
};
