import { ADMIN_ROUTES } from '@app/contracts';
import { Controller, Get, Header, Param, type StreamableFile } from '@nestjs/common';
import { GRAPHIQL_CONTENT_SECURITY_POLICY } from './graphiql-page';
import { GraphiqlService } from './graphiql.service';

/** /graphiql (outside production); the files' names change with their bytes. */
@Controller(ADMIN_ROUTES.graphiql.slice(1))
export class GraphiqlController {
  constructor(private readonly graphiql: GraphiqlService) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', GRAPHIQL_CONTENT_SECURITY_POLICY)
  @Header('Cache-Control', 'no-cache')
  page(): string {
    return this.graphiql.page();
  }

  @Get(':file')
  @Header('Cache-Control', 'public, max-age=31536000, immutable')
  file(@Param('file') name: string): StreamableFile {
    return this.graphiql.file(name);
  }
}
