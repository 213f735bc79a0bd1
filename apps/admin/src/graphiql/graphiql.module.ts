import { Module } from '@nestjs/common';
import { GraphiqlController } from './graphiql.controller';
import { GraphiqlService } from './graphiql.service';

/** The GraphiQL page and its files; AppModule leaves it out in production. */
@Module({ controllers: [GraphiqlController], providers: [GraphiqlService] })
export class GraphiqlModule {}
