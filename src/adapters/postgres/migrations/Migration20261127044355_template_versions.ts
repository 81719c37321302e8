import { Migration } from "@mikro-orm/migrations";

/**
 * Template versions: `template_version` keeps the content each change of a
 * template left (the store keeps the last 20 per template), deleted with its
 * template; `template.version` is the number of its latest. A template made
 * before this migration gets its current content as version 1, so it can be
 * restored after its next change.
 */
export class Migration20261127044355_template_versions extends Migration {
  override up(): void {
    this.addSql(`create table "template_version" ("template_id" uuid not null, "version" int not null, "company_id" uuid not null, "name" text not null, "subject" text not null, "html" text not null, "text_body" text null, "created_by" text not null, "restored_from" int null, "created_at" timestamptz not null default now(), primary key ("template_id", "version"))`);
    this.addSql(`create index "template_version_company_id_index" on "template_version" ("company_id")`);
    this.addSql(`alter table "template" add "version" int not null default 1`);
    this.addSql(`alter table "template_version" add constraint "template_version_template_id_fkey" foreign key ("template_id") references "template" ("id") on delete cascade`);
    this.addSql(`alter table "template_version" add constraint "template_version_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
    this.addSql(`alter table "template_version" add constraint "template_version_version_check" check (version >= 1)`);
    this.addSql(`insert into "template_version" ("template_id", "version", "company_id", "name", "subject", "html", "text_body", "created_by", "created_at") select "id", 1, "company_id", "name", "subject", "html", "text_body", 'operator', "updated_at" from "template"`);
  }

  override down(): void {
    this.addSql(`drop table if exists "template_version" cascade`);
    this.addSql(`alter table "template" drop column "version"`);
  }
}
