import { bearerToken } from '../core/bearer.js';
import type { Principal } from '../core/types.js';
import type { Validator } from '../core/validate.js';
import type { McpServices } from './services.js';
import { easeToolArguments } from './coerce.js';

/** What one HTTP request tells a tool about its caller. */
export interface CallerContext {
  /** The raw Authorization header; the key is never taken from arguments or the URL. */
  authorization: string | undefined;
  /** Counted by the registration limit (`limits.registrationsPerIpPerHour`). */
  clientIp: string;
}

/**
 * One MCP tool. Its inputSchema is the very schema that validates the REST request
 * (docs/design.md rule 4), with the app's limits; `call` returns exactly what the REST endpoint answers.
 */
export interface McpTool {
  name: string;
  description: string;
  schemaId: string;
  call(services: McpServices, validator: Validator, args: Record<string, unknown> | undefined, caller: CallerContext, signal?: AbortSignal): Promise<unknown>;
}

/** Numbers and numeric strings are eased where unambiguous (coerce.ts), then validated. */
const validArguments = <T>(validator: Validator, schemaId: string, args: Record<string, unknown> | undefined): T =>
  validator.validate<T>(schemaId, easeToolArguments(validator.schema(schemaId), args));

/**
 * A tool that needs no key (only register_agent). It gets its arguments as a function, so it
 * may count the call before they are validated (registration counts malformed requests too).
 */
export const keyless = <T>(
  name: string,
  description: string,
  schemaId: string,
  run: (services: McpServices, read: () => T, clientIp: string) => unknown,
): McpTool => ({
  name,
  description,
  schemaId,
  call: async (services, validator, args, caller) => run(services, () => validArguments<T>(validator, schemaId, args), caller.clientIp),
});

/** A tool that needs the Bearer key; like REST, the key is checked before the arguments. */
export const withKey = <T>(
  name: string,
  description: string,
  schemaId: string,
  run: (services: McpServices, input: T, principal: Principal, signal?: AbortSignal) => unknown,
): McpTool => ({
  name,
  description,
  schemaId,
  call: async (services, validator, args, caller, signal) => {
    const principal = await services.auth.authenticate(bearerToken(caller.authorization));
    return run(services, validArguments<T>(validator, schemaId, args), principal, signal);
  },
});
