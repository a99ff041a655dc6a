import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AppConfig, SecretBox } from '@switchboard/core';
import { ChangeNotices, NotifiedCache } from '@switchboard/core/database';
import { In, Repository } from 'typeorm';
import { Account } from './account.entity';
import { PhoneNumber } from './phone-number.entity';

/** What the Cloud API client needs to act for one connected number. */
export interface PlatformConnection {
  baseUrl: string;
  apiVersion: string;
  accessToken: string;
  phoneNumberId: string;
  businessAccountId: string;
}

const MESSAGING_IDS_KEPT = 10_000;
/** Any change to phone_numbers (a trigger NOTIFYs its id) drops every number kept: they change rarely. */
const NUMBER_CHANGED = 'phone_number_changed';

@Injectable()
export class AccountsService {
  private readonly secretBox: SecretBox;
  private readonly messagingIds = new Map<string, string>();
  /**
   * Numbers by `id:<row id>`, `platform:<messagingPhoneId>` and `default:<account id>`, and their decrypted
   * connections by row id: read on every send batch and every platform webhook, kept until PostgreSQL announces a
   * change (ChangeNotices). Frozen: a caller that changed one would change it for every other.
   */
  private readonly numbers: NotifiedCache<PhoneNumber>;
  private readonly connections: NotifiedCache<PlatformConnection>;

  constructor(
    @InjectRepository(Account) private readonly accounts: Repository<Account>,
    @InjectRepository(PhoneNumber) private readonly phoneNumbers: Repository<PhoneNumber>,
    config: AppConfig,
    notices: ChangeNotices,
  ) {
    this.secretBox = SecretBox.fromConfig(config);
    this.numbers = new NotifiedCache<PhoneNumber>(notices, NUMBER_CHANGED, { keyOf: () => '*' });
    this.connections = new NotifiedCache<PlatformConnection>(notices, NUMBER_CHANGED, { keyOf: () => '*' });
  }

  async getAccount(accountId: string) {
    const account = await this.accounts.findOneBy({ id: accountId });
    if (!account) throw new NotFoundException({ message: 'Account not found' });
    const phoneNumbers = await this.phoneNumbers.find({ where: { accountId }, order: { id: 'ASC' } });
    return { account, phoneNumbers };
  }

  /** The key that signs this account's per-message callbacks (see docs/messaging.md). */
  async callbackSecret(accountId: string): Promise<string> {
    const row = await this.accounts
      .createQueryBuilder('a')
      .addSelect('a.callbackSecret')
      .where('a.id = :id', { id: accountId })
      .getOne();
    return row?.callbackSecret ?? '';
  }

  /** The caller's connected number by its messagingPhoneId, or null when it is not this account's (or disconnected). */
  async findPhoneNumber(accountId: string, messagingPhoneId: string): Promise<PhoneNumber | null> {
    const phone = await this.phoneNumberByPlatformId(messagingPhoneId); // messaging_phone_id is unique
    return phone && String(phone.accountId) === String(accountId) && phone.status === 'CONNECTED' ? phone : null;
  }

  /** A connected number by its row id (phone_numbers.id), whatever its account; null when unknown. */
  phoneNumberById(id: string): Promise<PhoneNumber | null> {
    return this.numbers.get(`id:${id}`, () => this.phoneNumbers.findOneBy({ id }).then(frozen));
  }

  /**
   * A connected number by the platform's phone_number_id (our messagingPhoneId), whatever its account: how platform
   * webhooks find the account they belong to. Null for a number that is not connected here.
   */
  phoneNumberByPlatformId(messagingPhoneId: string): Promise<PhoneNumber | null> {
    return this.numbers.get(`platform:${messagingPhoneId}`, () =>
      this.phoneNumbers.findOneBy({ messagingPhoneId }).then(frozen),
    );
  }

  /** The account's first connected number (the default sender when none is named), or null. */
  defaultPhoneNumber(accountId: string): Promise<PhoneNumber | null> {
    return this.numbers.get(`default:${accountId}`, () =>
      this.phoneNumbers
        .find({ where: { accountId, status: 'CONNECTED' }, order: { id: 'ASC' }, take: 1 })
        .then(([phone]) => frozen(phone ?? null)),
    );
  }

  /**
   * messagingPhoneId by phone_numbers.id (any account), for showing rows of other modules that store phone_number_id.
   * A row's messaging_phone_id never changes and ids are not reused, so each is read once per process (at most
   * MESSAGING_IDS_KEPT kept); unknown ids are left out.
   */
  async messagingPhoneIds(ids: string[]): Promise<Map<string, string>> {
    const missing = [...new Set(ids)].filter((id) => !this.messagingIds.has(id));
    if (missing.length) {
      const rows: Array<{ id: string; messaging_phone_id: string }> = await this.phoneNumbers.query(
        `SELECT id::text, messaging_phone_id FROM phone_numbers WHERE id = ANY($1::bigint[])`,
        [missing],
      );
      if (this.messagingIds.size + rows.length > MESSAGING_IDS_KEPT) this.messagingIds.clear();
      for (const r of rows) this.messagingIds.set(r.id, r.messaging_phone_id);
    }
    const found = new Map<string, string>();
    for (const id of ids) {
      const messagingPhoneId = this.messagingIds.get(id);
      if (messagingPhoneId !== undefined) found.set(id, messagingPhoneId);
    }
    return found;
  }

  /** Connected numbers by row id (any account), for joining to rows of other modules that store phone_number_id. */
  async phoneNumbersByIds(ids: string[]): Promise<Map<string, PhoneNumber>> {
    if (!ids.length) return new Map();
    const rows = await this.phoneNumbers.findBy({ id: In([...new Set(ids)]) });
    return new Map(rows.map((p) => [p.id, p]));
  }

  /** The connected numbers of a WhatsApp Business Account (any account of ours), e.g. for its template webhooks. */
  phoneNumbersOfBusinessAccount(businessAccountId: string): Promise<PhoneNumber[]> {
    return this.phoneNumbers.findBy({ businessAccountId });
  }

  /** Decrypts the stored access token; use only to call the platform. */
  connectionFor(phoneNumberId: string): Promise<PlatformConnection> {
    return this.connections.get(phoneNumberId, async () => {
      const phone = await this.phoneNumbers
        .createQueryBuilder('p')
        .addSelect('p.accessTokenEncrypted')
        .where('p.id = :id', { id: phoneNumberId })
        .getOneOrFail();
      return Object.freeze({
        baseUrl: phone.apiBaseUrl,
        apiVersion: phone.apiVersion,
        accessToken: this.secretBox.decrypt(phone.accessTokenEncrypted),
        phoneNumberId: phone.messagingPhoneId,
        businessAccountId: phone.businessAccountId,
      });
    });
  }
}

const frozen = <T extends object>(value: T | null): T | null => (value ? Object.freeze(value) : null);
