import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  Headers,
  HttpCode,
  Post,
  Put,
  Req,
  Res,
} from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AccountsService } from '@switchboard/accounts';
import {
  CSRF_HEADER,
  CSRF_REFUSED,
  CurrentClient,
  Public,
  readCookie,
  RequireSignedIn,
  SESSION_COOKIE,
  type ConsolePrincipal,
} from '@switchboard/auth';
import { AppConfig } from '@switchboard/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ChangePasswordDto, SignInDto } from './users.dto';
import { SESSION_TTL_SECONDS, UsersService } from './users.service';

/**
 * Console sign-in (docs/console.md): a server-side session in an httpOnly, SameSite=Lax cookie. Every unsafe request
 * with the cookie, sign-in included, must carry the X-Switchboard-CSRF header (a cross-site form cannot set it).
 */
@ApiTags('Console session')
@Controller('console')
export class ConsoleSessionController {
  constructor(
    private readonly users: UsersService,
    private readonly config: AppConfig,
    private readonly accounts: AccountsService,
  ) {}

  @Public()
  @Post('session')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in with email and password: sets the session cookie; send the header X-Switchboard-CSRF: 1',
  })
  async signIn(
    @Body() body: SignInDto,
    @Headers(CSRF_HEADER) csrf: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (!csrf) throw new ForbiddenException(CSRF_REFUSED);
    const { cookieValue, principal } = await this.users.signIn(body.email, body.password);
    reply.header('set-cookie', this.cookie(cookieValue, SESSION_TTL_SECONDS));
    return { success: true, data: await this.me(principal) };
  }

  @RequireSignedIn()
  @Delete('session')
  @ApiOperation({ summary: 'Sign out: ends the session server-side and clears the cookie' })
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (cookie) await this.users.signOut(cookie);
    reply.header('set-cookie', this.cookie('', 0));
    return { success: true, message: 'Signed out' };
  }

  @RequireSignedIn()
  @Get('me')
  @ApiOperation({ summary: 'The signed-in person: email, role, grants, account, CSRF token for unsafe requests' })
  async getMe(@CurrentClient() principal: ConsolePrincipal) {
    if (!principal.userId) throw new ForbiddenException({ message: 'Only for console sessions' });
    return { success: true, data: await this.me(principal) };
  }

  @RequireSignedIn()
  @Put('password')
  @ApiOperation({ summary: 'Change the password: every session of the person ends (sign in again)' })
  async changePassword(
    @CurrentClient() principal: ConsolePrincipal,
    @Body() body: ChangePasswordDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (!principal.userId) throw new ForbiddenException({ message: 'Only for console sessions' });
    await this.users.changePassword(principal.userId, body.currentPassword, body.newPassword);
    reply.header('set-cookie', this.cookie('', 0));
    return { success: true, message: 'Password changed; sign in again' };
  }

  private async me(p: ConsolePrincipal) {
    return {
      userId: Number(p.userId),
      email: p.email,
      role: p.role,
      accountId: Number(p.accountId),
      grants: p.grants,
      csrfToken: p.csrfToken,
      messagingPhoneIds: (await this.accounts.getAccount(p.accountId)).phoneNumbers.map((n) => n.messagingPhoneId),
      sandbox: !this.config.isProduction,
    };
  }

  private cookie(value: string, maxAge: number): string {
    const secure = this.config.CONSOLE_SECURE_COOKIE ?? this.config.isProduction;
    return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  }
}
