import { API_ROLES, type ApiRole } from "#runtime/api-roles.ts";

/** A bearer token of `memgate serve` and the roles it holds (shared/runtime/api-roles.ts). */
export interface RoleToken {
  token: string;
  roles: readonly ApiRole[];
}

/**
 * The tokens `memgate serve` was started with: `--token` (or MEMGATE_TOKEN) holds every role, as
 * it could always call every route; each `--role-token ROLE=TOKEN` (or MEMGATE_ROLE_TOKENS,
 * comma-separated) one role, and a token named for several roles holds them all.
 */
export function roleTokens(adminToken: string | undefined, byRole: readonly string[]): RoleToken[] {
  const tokens = new Map<string, Set<ApiRole>>();
  const hold = (token: string, roles: readonly ApiRole[]) => {
    checkToken(token, "--role-token");
    const held = tokens.get(token) ?? new Set<ApiRole>();
    for (const role of roles) held.add(role);
    tokens.set(token, held);
  };
  for (const entry of byRole) {
    const [role, token] = splitOnce(entry);
    if (!API_ROLES.includes(role as ApiRole) || token === undefined)
      throw new RoleTokenError(
        `--role-token "${entry.slice(0, 40)}" must be ROLE=TOKEN with ROLE one of ${API_ROLES.join(", ")}`,
      );
    hold(token, [role as ApiRole]);
  }
  if (adminToken !== undefined) {
    checkToken(adminToken, "--token");
    tokens.set(adminToken, new Set(API_ROLES));
  }
  return [...tokens].map(([token, roles]) => ({ token, roles: API_ROLES.filter((r) => roles.has(r)) }));
}

/** A token the command line cannot accept: a usage error naming the flag. */
export class RoleTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RoleTokenError";
  }
}

function splitOnce(entry: string): [string, string | undefined] {
  const at = entry.indexOf("=");
  return at < 0 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
}

function checkToken(token: string, flag: string): void {
  if (token.length < 8)
    throw new RoleTokenError(`${flag} must be at least 8 characters (or leave it out on loopback)`);
  // RFC 6750's token characters: anything else could never be sent as Authorization: Bearer.
  if (!/^[A-Za-z0-9._~+/-]+=*$/.test(token))
    throw new RoleTokenError(`${flag} may hold only letters, digits and - . _ ~ + / (then = padding)`);
}
