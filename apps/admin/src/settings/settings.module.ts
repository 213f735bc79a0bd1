import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ADMIN_SETTINGS, readAdminSettings, type AdminSettings } from './admin-settings';

/** ADMIN_SETTINGS for every module: read from the environment once, or given by a test. */
@Global()
@Module({})
export class SettingsModule {
  static forRoot(settings: AdminSettings = readAdminSettings()): DynamicModule {
    return {
      module: SettingsModule,
      providers: [{ provide: ADMIN_SETTINGS, useValue: settings }],
      exports: [ADMIN_SETTINGS],
    };
  }
}
