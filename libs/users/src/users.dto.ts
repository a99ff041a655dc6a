import { ApiProperty } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/** Checked in the service (the same 401 for every wrong combination; 400 only when a field is missing). */
export class SignInDto {
  @ApiProperty({ example: 'ann@example.com' })
  @Allow()
  email: unknown;

  @ApiProperty()
  @Allow()
  password: unknown;
}

export class ChangePasswordDto {
  @ApiProperty()
  @Allow()
  currentPassword: unknown;

  @ApiProperty({ minLength: 12 })
  @Allow()
  newPassword: unknown;
}
