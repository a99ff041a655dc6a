import { Foundation1763780000000 } from './1763780000000-foundation';
import { Contacts1763780100000 } from './1763780100000-contacts';
import { MessagesAndPlatformWebhooks1763783000000 } from './1763783000000-messages-and-platform-webhooks';
import { Templates1763785000000 } from './1763785000000-templates';
import { Flows1763787000000 } from './1763787000000-flows';
import { Campaigns1763789000000 } from './1763789000000-campaigns';
import { Automations1763790000000 } from './1763790000000-automations';
import { ContactCounts1763791000000 } from './1763791000000-contact-counts';
import { ContactCustomFields1763792000000 } from './1763792000000-contact-custom-fields';
import { MessagingSends1763795000000 } from './1763795000000-messaging-sends';
import { SendBatches1763796000000 } from './1763796000000-send-batches';
import { CampaignCounts1763797000000 } from './1763797000000-campaign-counts';
import { WhatsappPayloads1763801000000 } from './1763801000000-whatsapp-payloads';
import { Webhooks1763805000000 } from './1763805000000-webhooks';
import { ConsoleUsers1763806000000 } from './1763806000000-console-users';
import { InboxReadMarks1764100000000 } from './1764100000000-inbox-read-marks';
import { RunsByContact1764110000000 } from './1764110000000-runs-by-contact';
import { ContactImports1764120000000 } from './1764120000000-contact-imports';
import { CampaignSchedule1764120100000 } from './1764120100000-campaign-schedule';
import { SecretsKeyCheck1764130000000 } from './1764130000000-secrets-key-check';
import { SendClaims1764150000000 } from './1764150000000-send-claims';
import { TemplatesNewest1764165000000 } from './1764165000000-templates-newest';
import { ApiClientChanges1764170000000 } from './1764170000000-api-client-changes';
import { PhoneNumberChanges1764171000000 } from './1764171000000-phone-number-changes';
import { RowChangeNotices1764180000000 } from './1764180000000-row-change-notices';
import { MessagesHotUpdates1764181000000 } from './1764181000000-messages-hot-updates';
import { MessagesFewerIndexEntries1764190000000 } from './1764190000000-messages-fewer-index-entries';
import { RunsEarlyReplies1764191000000 } from './1764191000000-runs-early-replies';
import { MessagesRoomForUpdates1764200000000 } from './1764200000000-messages-room-for-updates';
import { InboxNumberReadMarks1764210000000 } from './1764210000000-inbox-number-read-marks';
import { WorkflowDraftRevisions1764220000000 } from './1764220000000-workflow-draft-revisions';
import { CampaignPausedReason1764230000000 } from './1764230000000-campaign-paused-reason';
import { CampaignTriggersCompleted1764240000000 } from './1764240000000-campaign-triggers-completed';

/** In order. A new migration is a new file here, never an edit of an applied one. */
export const MIGRATIONS = [
  Foundation1763780000000,
  Contacts1763780100000,
  MessagesAndPlatformWebhooks1763783000000,
  Templates1763785000000,
  Flows1763787000000,
  Campaigns1763789000000,
  Automations1763790000000,
  ContactCounts1763791000000,
  ContactCustomFields1763792000000,
  MessagingSends1763795000000,
  SendBatches1763796000000,
  CampaignCounts1763797000000,
  WhatsappPayloads1763801000000,
  Webhooks1763805000000,
  ConsoleUsers1763806000000,
  InboxReadMarks1764100000000,
  RunsByContact1764110000000,
  ContactImports1764120000000,
  CampaignSchedule1764120100000,
  SecretsKeyCheck1764130000000,
  SendClaims1764150000000,
  TemplatesNewest1764165000000,
  ApiClientChanges1764170000000,
  PhoneNumberChanges1764171000000,
  RowChangeNotices1764180000000,
  MessagesHotUpdates1764181000000,
  MessagesFewerIndexEntries1764190000000,
  RunsEarlyReplies1764191000000,
  MessagesRoomForUpdates1764200000000,
  InboxNumberReadMarks1764210000000,
  WorkflowDraftRevisions1764220000000,
  CampaignPausedReason1764230000000,
  CampaignTriggersCompleted1764240000000,
];
