import { Migration } from "@mikro-orm/migrations";

/**
 * Attachments on sends: `message_attachment` holds each file of a message
 * apart from the message row (the log's reads and moves never carry the
 * bytes), by message id and company; `message.content_removed_at` marks a
 * message whose content (html, text, attachments) the content retention
 * deleted, and `message_content_kept_index` lets that job find the oldest
 * messages still holding theirs without scanning the table.
 */
export class Migration20261127040000_message_attachments extends Migration {
  override up(): void {
    this.addSql(`create table "message_attachment" ("id" bigserial primary key, "message_id" uuid not null, "company_id" uuid not null, "position" smallint not null, "filename" text not null, "content_type" text not null, "content_id" text null, "size" int not null, "content" bytea not null)`);
    this.addSql(`alter table "message_attachment" add constraint "message_attachment_position_key" unique ("message_id", "position")`);
    this.addSql(`alter table "message" add "content_removed_at" timestamptz null`);
    this.addSql(`create index "message_content_kept_index" on "message" ("created_at") where content_removed_at IS NULL`);
    this.addSql(`alter table "message_attachment" add constraint "message_attachment_message_id_fkey" foreign key ("message_id") references "message" ("id") on delete cascade`);
  }

  override down(): void {
    this.addSql(`drop table if exists "message_attachment" cascade`);
    this.addSql(`drop index "message_content_kept_index"`);
    this.addSql(`alter table "message" drop column "content_removed_at"`);
  }
}
