import { Module } from '@nestjs/common';

/** Placeholder: being written. */
@Module({})
export class HttpModule {}
