import {
  BadRequestException,
  ConflictException,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { accountExists } from '@switchboard/accounts';
import type { ConsolePrincipal, ConsoleSessionResolver } from '@switchboard/auth';
import { AppConfig, REDIS } from '@switchboard/core';
import type Redis from 'ioredis';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { DUMMY_HASH, generatePassword, hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords';
import { grantsOfRole, isRole, ROLES, type Role } from './roles';

/** Sessions last 12 hours from sign-in; sign-out and a password change end them earlier. */
export const SESSION_TTL_SECONDS = 12 * 3600;
/** After this many failed sign-ins for one email within the window, that email is locked for the window. */
export const MAX_FAILED_SIGN_INS = 5;
export const LOCKOUT_SECONDS = 15 * 60;

export const INVALID_SIGN_IN = { message: 'Invalid email or password' };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export interface NewUser {
  accountId: string;
  email: string;
  role: string;
  /** Omitted: a one-time password is generated and returned. */
  password?: string;
}

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  password_hash: string;
}

/** Creates a person of an account (the admin CLI and `npm run dev` use this without the Nest app). */
export async function createUser(
  db: DataSource | EntityManager,
  input: NewUser,
): Promise<{ userId: string; accountId: string; email: string; role: Role; password: string }> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new BadRequestException({ message: 'email must be an email address', field: 'email' });
  if (!isRole(input.role))
    throw new BadRequestException({ message: `role must be one of: ${ROLES.join(', ')}`, field: 'role' });
  const password = input.password ?? generatePassword();
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new BadRequestException({
      message: `password must be at least ${MIN_PASSWORD_LENGTH} characters`,
      field: 'password',
    });
  if (!(await accountExists(db, String(input.accountId))))
    throw new BadRequestException({ message: `No account with id ${input.accountId}`, field: 'account' });
  const hash = await hashPassword(password);
  const rows: Array<{ id: string }> = await db.query(
    `INSERT INTO users (account_id, email, password_hash, role) VALUES ($1, $2, $3, $4) ON CONFLICT (lower(email)) DO NOTHING RETURNING id`,
    [input.accountId, email, hash, input.role],
  );
  if (!rows.length)
    throw new ConflictException({ message: `A user with email ${email} already exists`, field: 'email' });
  return { userId: String(rows[0].id), accountId: String(input.accountId), email, role: input.role, password };
}

/**
 * Gives the person with this email a new password (a one-time one unless given) and ends every session of theirs (the
 * admin CLI's reset-password). Null when no one has that email. A lock after failed sign-ins runs out by itself.
 */
export async function resetPassword(
  db: DataSource,
  emailInput: string,
  password = generatePassword(),
): Promise<{ userId: string; email: string; password: string } | null> {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new BadRequestException({
      message: `password must be at least ${MIN_PASSWORD_LENGTH} characters`,
      field: 'password',
    });
  const email = emailInput.trim().toLowerCase();
  const [user]: Array<{ id: string }> = await db.query(`SELECT id FROM users WHERE lower(email) = $1`, [email]);
  if (!user) return null;
  await storePassword(db, String(user.id), password);
  return { userId: String(user.id), email, password };
}

/** Removes the person with this email and their sessions (the admin CLI's delete-user). Null when no one has it. */
export async function deleteUser(
  db: DataSource,
  emailInput: string,
): Promise<{ userId: string; accountId: string; email: string } | null> {
  const email = emailInput.trim().toLowerCase();
  // a DELETE's rows come with its count; console_sessions go with the user (ON DELETE CASCADE)
  const [[user]] = (await db.query(`DELETE FROM users WHERE lower(email) = $1 RETURNING id, account_id`, [email])) as [
    Array<{ id: string; account_id: string }>,
    number,
  ];
  return user ? { userId: String(user.id), accountId: String(user.account_id), email } : null;
}

async function storePassword(db: DataSource, userId: string, password: string): Promise<void> {
  const hash = await hashPassword(password);
  await db.transaction(async (tx) => {
    await tx.query(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [userId, hash]);
    await tx.query(`DELETE FROM console_sessions WHERE user_id = $1`, [userId]);
  });
}

/** People of an account and their console sessions (tables `users`, `console_sessions`). */
@Injectable()
export class UsersService implements ConsoleSessionResolver {
  constructor(
    private readonly db: DataSource,
    private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  createUser(input: NewUser, manager: DataSource | EntityManager = this.db) {
    return createUser(manager, input);
  }

  /**
   * Checks the password and opens a session. Unknown email and wrong password get the same 401 (and take the same
   * time); after MAX_FAILED_SIGN_INS failures for an email, it is locked for LOCKOUT_SECONDS (429), known or not.
   */
  async signIn(emailInput: unknown, password: unknown): Promise<{ cookieValue: string; principal: ConsolePrincipal }> {
    if (typeof emailInput !== 'string' || emailInput.trim() === '')
      throw new BadRequestException({ message: 'email is required', field: 'email' });
    if (typeof password !== 'string' || password === '')
      throw new BadRequestException({ message: 'password is required', field: 'password' });
    const email = emailInput.trim().toLowerCase();
    const user = await this.passwordGuess(email, async () => {
      const [row]: UserRow[] = await this.db.query(
        `SELECT id, account_id, email, role, password_hash FROM users WHERE lower(email) = $1`,
        [email],
      );
      // an unknown email takes as long as a wrong password (a dummy hash is checked)
      return (await verifyPassword(password, row?.password_hash ?? DUMMY_HASH)) ? row : undefined;
    });
    if (!user) throw new UnauthorizedException(INVALID_SIGN_IN);
    const cookieValue = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    await this.db.query(
      `INSERT INTO console_sessions (id, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
      [sha256(cookieValue), user.id, csrfToken, SESSION_TTL_SECONDS],
    );
    return { cookieValue, principal: this.principal(user, csrfToken) };
  }

  async resolve(cookieValue: string): Promise<ConsolePrincipal | null> {
    const [row]: Array<UserRow & { csrf_token: string }> = await this.db.query(
      `SELECT u.id, u.account_id, u.email, u.role, s.csrf_token FROM console_sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id = $1 AND s.expires_at > now()`,
      [sha256(cookieValue)],
    );
    return row ? this.principal(row, row.csrf_token) : null;
  }

  async signOut(cookieValue: string): Promise<void> {
    await this.db.query(`DELETE FROM console_sessions WHERE id = $1`, [sha256(cookieValue)]);
  }

  /** Sets a new password and ends every session of the user (the caller signs in again). */
  async changePassword(userId: string, currentPassword: unknown, newPassword: unknown): Promise<void> {
    if (typeof newPassword !== 'string' || newPassword.length < MIN_PASSWORD_LENGTH)
      throw new BadRequestException({
        message: `newPassword must be at least ${MIN_PASSWORD_LENGTH} characters`,
        field: 'newPassword',
      });
    const [user]: UserRow[] = await this.db.query(`SELECT email, password_hash FROM users WHERE id = $1`, [userId]);
    if (!user) throw new BadRequestException({ message: 'currentPassword is wrong', field: 'currentPassword' });
    // the sign-in's count: a stolen session must not guess the password (and keep access once the session ends)
    const ok = await this.passwordGuess(
      user.email.toLowerCase(),
      async () => typeof currentPassword === 'string' && verifyPassword(currentPassword, user.password_hash),
    );
    if (!ok) throw new BadRequestException({ message: 'currentPassword is wrong', field: 'currentPassword' });
    await this.setPassword(userId, newPassword);
  }

  /**
   * A password guess for the email (sign-in, password change): refused with 429 past MAX_FAILED_SIGN_INS, else
   * `check`ed; a wrong one locks the email for LOCKOUT_SECONDS after it, a right one clears the count. Counted before
   * the password is checked: a burst of guesses at once each read a count under the limit, and all of them were tried.
   */
  private async passwordGuess<T>(
    email: string,
    check: () => Promise<T | undefined | false>,
  ): Promise<T | undefined | false> {
    const failKey = `${this.config.REDIS_PREFIX}:signin-fail:${sha256(email)}`;
    const [, [, attempts]] = (await this.redis
      .multi()
      .set(failKey, '0', 'EX', LOCKOUT_SECONDS, 'NX')
      .incr(failKey)
      .exec()) as [unknown, [unknown, number]];
    if (attempts > MAX_FAILED_SIGN_INS) {
      const ttl = Math.max(1, await this.redis.ttl(failKey));
      throw new HttpException(
        {
          message: `Too many failed sign-ins for this email. Try again in ${Math.ceil(ttl / 60)} minute(s).`,
          retryAfterSeconds: ttl,
        },
        HttpStatus.TOO_MANY_REQUESTS,
      );
    }
    const ok = await check();
    if (ok) await this.redis.del(failKey);
    else await this.redis.expire(failKey, LOCKOUT_SECONDS);
    return ok;
  }

  setPassword(userId: string, password: string): Promise<void> {
    return storePassword(this.db, userId, password);
  }

  private principal(user: Pick<UserRow, 'id' | 'account_id' | 'email' | 'role'>, csrfToken: string): ConsolePrincipal {
    return {
      clientId: `user:${user.id}`,
      userId: String(user.id),
      accountId: String(user.account_id),
      email: user.email,
      role: user.role,
      grants: grantsOfRole(user.role as Role),
      csrfToken,
    };
  }
}
