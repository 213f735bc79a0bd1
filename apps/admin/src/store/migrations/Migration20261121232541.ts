import { Migration } from '@mikro-orm/migrations';

export class Migration20261121232541 extends Migration {
  override up(): void {
    this.addSql(
      `create table \`audit_entries\` (\`id\` integer not null primary key autoincrement, \`at\` integer not null, \`actor\` text not null, \`action\` text not null, \`target\` text not null, \`before\` text null, \`after\` text null, \`detail\` text null);`,
    );

    this.addSql(
      `create table \`builtin_seeds\` (\`provider\` text not null, \`model\` text not null, \`seeded_at\` integer not null, primary key (\`provider\`, \`model\`));`,
    );

    this.addSql(
      `create table \`model_quotas\` (\`provider\` text not null, \`model\` text not null, \`max_rpm\` integer not null, \`max_tpm\` integer not null, \`max_rpd\` integer not null, primary key (\`provider\`, \`model\`));`,
    );

    this.addSql(
      `create table \`providers\` (\`name\` text not null, \`enabled\` integer not null, primary key (\`name\`));`,
    );

    this.addSql(
      `create table \`quotas\` (\`name\` text not null, \`spec\` text not null, \`version\` integer not null, \`updated_at\` integer not null, primary key (\`name\`));`,
    );
  }
}
