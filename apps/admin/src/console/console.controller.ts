import { ADMIN_ROUTES } from '@app/contracts';
import { Controller, Get, Header, Headers, Param, Res, type StreamableFile } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { CONSOLE_CONTENT_SECURITY_POLICY } from './console-page';
import { ConsoleService } from './console.service';

/** `/` (the console's page) and `/assets/<file>` (its files, named by a hash of their bytes). */
@Controller()
export class ConsoleController {
  constructor(private readonly webConsole: ConsoleService) {}

  @Get(ADMIN_ROUTES.console.slice(1))
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY)
  @Header('Cache-Control', 'no-cache')
  @Header('X-Content-Type-Options', 'nosniff')
  page(@Res({ passthrough: true }) reply: FastifyReply): Buffer | string {
    const page = this.webConsole.page();
    reply.code(page.status);
    return page.body;
  }

  @Get(`${ADMIN_ROUTES.consoleAssets.slice(1)}/:file`)
  @Header('X-Content-Type-Options', 'nosniff')
  asset(
    @Param('file') name: string,
    @Headers('accept-encoding') acceptEncoding: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): StreamableFile {
    const { file, encoding } = this.webConsole.asset(name, acceptEncoding);
    // Set once found: a 404 cached for a year would outlive the deploy that adds the file.
    reply.header('Cache-Control', 'public, max-age=31536000, immutable');
    reply.header('Vary', 'Accept-Encoding');
    if (encoding !== undefined) reply.header('Content-Encoding', encoding);
    return file;
  }
}
