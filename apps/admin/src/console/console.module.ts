import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';
import { ConsoleService } from './console.service';

/** The web console (apps/console, built into dist/console), served in production too. */
@Module({ controllers: [ConsoleController], providers: [ConsoleService] })
export class ConsoleModule {}
