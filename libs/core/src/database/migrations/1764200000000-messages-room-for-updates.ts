import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A campaign message's row (~620 bytes) is claimed right after it is inserted, and the claim changes no indexed
 * column: it can be a HOT update (no index entries) if the page has room for the new version. At fillfactor 80 a page
 * of ten fresh rows had room for two; a chunk claims all ten at once, so eight of them went to other pages with an
 * entry in each of the table's indexes (6 WAL records and 830 bytes per claimed row). At 50 the page has room for a
 * new version of each row. An outbound row is updated four times or more (claim, answer, sent, delivered), so its
 * page fills with its own versions either way: after a 5,000-recipient campaign the table was smaller than at 80 (834
 * pages against 1,044). Applies to pages written from now on.
 */
export class MessagesRoomForUpdates1764200000000 implements MigrationInterface {
  name = 'MessagesRoomForUpdates1764200000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages SET (fillfactor = 50)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE messages SET (fillfactor = 80)`);
  }
}
