import { Migration } from '@mikro-orm/migrations';

/**
 * quotas.match: the spec's pattern in a column of its own, unique (issue 11 point 10). Existing
 * rows are filled from their spec. A database that already holds two quotas with one pattern
 * (written by the race this fixes) keeps both rows; the pattern goes to the first by name, the
 * other keeps NULL here and is named in a warning at start (see StoreModule) until it is changed.
 */
export class Migration20261124055758 extends Migration {
  override up(): void {
    this.addSql(`alter table \`quotas\` add column \`match\` text null;`);
    this.addSql(
      `update \`quotas\` set \`match\` = json_extract(\`spec\`, '$.match') where \`name\` in (select min(\`name\`) from \`quotas\` where json_extract(\`spec\`, '$.match') is not null group by json_extract(\`spec\`, '$.match'));`,
    );
    this.addSql(`create unique index \`quotas_match_unique\` on \`quotas\` (\`match\`);`);
  }
}
