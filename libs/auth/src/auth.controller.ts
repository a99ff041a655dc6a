import { Body, Controller, Delete, Headers, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { AuthService } from './auth.service';
import { Public } from './grants';

class RefreshTokenBody {
  @ApiPropertyOptional({ description: 'the refresh token of the last token pair' })
  @IsOptional()
  @IsString()
  refreshToken?: string;
}

class TokenPairResponse {
  @ApiProperty({ description: 'access token (JWT), 1 hour; send it as the Authorization header' })
  token: string;
  @ApiProperty({ description: 'refresh token (JWT), 7 days; only the newest one is valid' })
  refreshToken: string;
}

@ApiTags('Authentication')
@Public()
@Controller()
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('v1/authenticate')
  @HttpCode(200)
  @ApiOperation({ summary: 'Exchange Client ID and Client Secret for a token pair' })
  @ApiHeader({ name: 'clientid', required: true })
  @ApiHeader({ name: 'clientsecret', required: true })
  @ApiOkResponse({ type: TokenPairResponse })
  authenticate(@Headers('clientid') clientId?: string, @Headers('clientsecret') clientSecret?: string) {
    return this.auth.authenticate(clientId, clientSecret);
  }

  @Post('v1/refreshToken')
  @HttpCode(200)
  @ApiOperation({ summary: 'Exchange the refresh token for a new pair; the refresh token rotates' })
  @ApiBody({ type: RefreshTokenBody })
  @ApiOkResponse({ type: TokenPairResponse })
  refresh(@Body() body: RefreshTokenBody) {
    return this.auth.refresh(body?.refreshToken);
  }

  @Delete('v1/logout/:refreshToken')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke the refresh token (access tokens stay valid until they expire)' })
  async logout(@Param('refreshToken') refreshToken: string) {
    await this.auth.logout(refreshToken);
    return { success: true, message: 'Logged out successfully' };
  }
}
