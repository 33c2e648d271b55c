import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Get, Post, Request, Response, Route, Security, SuccessResponse, Tags, OperationId, Example } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { IssuedToken } from '../../services/tokens';
import type { Problem } from '../problem';
import { currentUser, login, registerUser, type UserView } from '../../services/auth-service';

interface RegisterBody {
  /**
   * @example "wanjiku@example.com"
   * @maxLength 320
   */
  email: string;
  /**
   * At least 10 characters.
   * @minLength 10
   * @example "correct-horse-battery"
   * @maxLength 256
   */
  password: string;
  /**
   * @example "Wanjiku Kamau"
   * @maxLength 200
   */
  full_name: string;
  /**
   * Kenyan number, E.164.
   * @example "+254712345678"
   * @maxLength 20
   */
  phone?: string;
}

interface LoginBody {
  /**
   * @example "wanjiku@example.com"
   * @maxLength 320
   */
  email: string;
  /**
   * @example "correct-horse-battery"
   * @maxLength 256
   */
  password: string;
}

@Route('auth')
@Tags('Auth')
export class AuthController extends Controller {
  /**
   * Create an account with the `user` role. A `role` field is ignored: roles are never self-assigned.
   * @summary Register a user
   */
  @Post('register')
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(409, 'E-mail taken')
  @Response<Problem>(429, 'Too many registrations')
  @OperationId('registerUser')
  public async register(@Body() body: RegisterBody, @Request() req: ExpressRequest): Promise<UserView> {
    const user = await registerUser(body, req.ip ?? 'unknown');
    this.setStatus(201);
    return user;
  }

  /**
   * Exchange e-mail and password for a short-lived bearer token (HS256 JWT).
   * @summary Log in
   */
  @Post('login')
  @Response<Problem>(400, 'No e-mail or password')
  @Response<Problem>(401, 'Wrong e-mail or password')
  @Response<Problem>(429, 'Too many attempts')
  @Example<IssuedToken>({
    access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl',
    token_type: 'Bearer',
    expires_in: 900,
  })
  @OperationId('logIn')
  public async login(@Body() body: LoginBody, @Request() req: ExpressRequest): Promise<IssuedToken> {
    return login(body.email, body.password, req.ip ?? 'unknown');
  }

  /**
   * The current user.
   * @summary Get the signed-in user
   */
  @Get('me')
  @Security('jwt')
  @Response<Problem>(401, 'Unauthenticated')
  @OperationId('getCurrentUser')
  public async me(@Request() req: ExpressRequest & { user: Caller }): Promise<UserView> {
    return currentUser(req.user.id);
  }
}
