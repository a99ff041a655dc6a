import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workflow drafts (docs/console.md "Drafts and versions"): the last draft revision handed out for a workflow, kept when
 * its draft is published or discarded, so a revision number is never given twice. A new draft used to start again at
 * revision 1, and an editor still holding the old draft's revision 1 overwrote it without a 409.
 */
export class WorkflowDraftRevisions1764220000000 implements MigrationInterface {
  name = 'WorkflowDraftRevisions1764220000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE workflows ADD COLUMN draft_revision integer NOT NULL DEFAULT 0`);
    await db.query(
      `UPDATE workflows w SET draft_revision = d.revision FROM workflow_drafts d WHERE d.workflow_id = w.id`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE workflows DROP COLUMN draft_revision`);
  }
}
