/**
 * views.open, views.push, views.update, views.publish.
 *
 * Slack answers a view over its limits with `invalid_arguments` and one `[ERROR] … [json-pointer:/view/…]`
 * line per problem (not `invalid_blocks`, which is chat.*'s answer).
 */
import { z } from 'zod';
import { checkView } from '../../block-kit-limits.ts';
import { isTriggerExpired, isTriggerId, triggerIdUser } from '../../trigger-ids.ts';
import type { ViewSpec, Workspace } from '../../workspace.ts';
import { parseArgs } from '../args.ts';
import { fail, type MethodContext, ok, type SlackResponse, type WebApiMethod } from '../method.ts';

const PlainTextSchema = z.object({
  type: z.literal('plain_text'),
  text: z.string(),
  emoji: z.boolean().optional(),
});

const ViewSpecSchema = z.object({
  type: z.enum(['modal', 'home']),
  title: PlainTextSchema.optional(),
  submit: PlainTextSchema.optional(),
  close: PlainTextSchema.optional(),
  blocks: z.array(z.record(z.string(), z.unknown())).default([]),
  private_metadata: z.string().optional(),
  callback_id: z.string().optional(),
  external_id: z.string().optional(),
  clear_on_close: z.boolean().optional(),
  notify_on_close: z.boolean().optional(),
});

export type Decoded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly response: SlackResponse };

/**
 * The `view` argument, checked against Block Kit limits and the surface the method serves. The page also
 * checks `response_action` views with it.
 */
export function decodeView(value: unknown, surface: 'modal' | 'home' | 'any'): Decoded<ViewSpec> {
  if (value === undefined)
    return { ok: false, response: fail('invalid_arguments', ['missing required field: view']) };
  if (typeof value !== 'object' || value === null) {
    return {
      ok: false,
      response: fail('invalid_arguments', ['view must be a JSON object [json-pointer:/view]']),
    };
  }
  const violations = checkView(value);
  if (violations.length > 0) {
    return {
      ok: false,
      response: fail(
        'invalid_arguments',
        violations.map((violation) => violation.message),
      ),
    };
  }
  const parsed = ViewSpecSchema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues.map(
      (issue) => `${issue.message} [json-pointer:/view/${issue.path.join('/')}]`,
    );
    return { ok: false, response: fail('invalid_arguments', details) };
  }
  if (surface !== 'any' && parsed.data.type !== surface) {
    return {
      ok: false,
      response: fail('invalid_arguments', [`must be ${surface} [json-pointer:/view/type]`]),
    };
  }
  return { ok: true, value: parsed.data };
}

/**
 * A usable trigger id (well-formed, minted less than `triggerTtlMs` ago, not used before), used up by
 * this call; its user, when it carries one.
 */
function exchangeTrigger(context: MethodContext, triggerId: string | undefined): Decoded<string | undefined> {
  if (triggerId === undefined) {
    return { ok: false, response: fail('invalid_arguments', ['missing required field: trigger_id']) };
  }
  if (!isTriggerId(triggerId)) return { ok: false, response: fail('invalid_trigger_id') };
  if (isTriggerExpired(triggerId, context.now(), context.triggerTtlMs)) {
    return { ok: false, response: fail('expired_trigger_id') };
  }
  if (!context.workspace.exchangeTrigger(triggerId)) {
    return { ok: false, response: fail('exchanged_trigger_id') };
  }
  return { ok: true, value: triggerIdUser(triggerId) };
}

/** external_id must be unique among live views. */
function externalIdTaken(workspace: Workspace, spec: ViewSpec, exceptViewId?: string): boolean {
  if (spec.external_id === undefined || spec.external_id === '') return false;
  const holder = workspace.viewByExternalId(spec.external_id);
  return holder !== undefined && holder.id !== exceptViewId;
}

const OpenArgs = z.object({ trigger_id: z.string().optional(), view: z.unknown().optional() });

export const viewsOpen: WebApiMethod = {
  run(raw, context) {
    const { workspace } = context;
    const parsed = parseArgs(OpenArgs, raw);
    if (!parsed.ok) return parsed.response;
    const view = decodeView(parsed.value.view, 'modal');
    if (!view.ok) return view.response;
    if (externalIdTaken(workspace, view.value)) return fail('duplicate_external_id');
    const trigger = exchangeTrigger(context, parsed.value.trigger_id);
    if (!trigger.ok) return trigger.response;
    return ok({ view: workspace.openModal(trigger.value, view.value) });
  },
};

export const viewsPush: WebApiMethod = {
  run(raw, context) {
    const { workspace } = context;
    const parsed = parseArgs(OpenArgs, raw);
    if (!parsed.ok) return parsed.response;
    const view = decodeView(parsed.value.view, 'modal');
    if (!view.ok) return view.response;
    if (externalIdTaken(workspace, view.value)) return fail('duplicate_external_id');
    const trigger = exchangeTrigger(context, parsed.value.trigger_id);
    if (!trigger.ok) return trigger.response;
    const pushed = workspace.pushModal(trigger.value, view.value);
    if (pushed === 'push_limit_reached') return fail('push_limit_reached');
    // Slack needs a modal open to push onto; it names no error for this, so the emulator says not_found.
    if (pushed === 'no_open_modal') return fail('not_found', ['no modal is open to push onto']);
    return ok({ view: pushed });
  },
};

const UpdateArgs = z.object({
  view_id: z.string().optional(),
  external_id: z.string().optional(),
  hash: z.string().optional(),
  view: z.unknown().optional(),
});

export const viewsUpdate: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(UpdateArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    if (args.view_id === undefined && args.external_id === undefined) {
      return fail('invalid_arguments', ['view_id or external_id is required']);
    }
    const view = decodeView(args.view, 'any');
    if (!view.ok) return view.response;
    const current =
      args.view_id !== undefined
        ? workspace.view(args.view_id)
        : workspace.viewByExternalId(args.external_id ?? '');
    if (!current || !workspace.isLive(current.id)) return fail('not_found');
    if (args.hash !== undefined && args.hash !== '' && args.hash !== current.hash)
      return fail('hash_conflict');
    if (externalIdTaken(workspace, view.value, current.id)) return fail('duplicate_external_id');
    const updated = workspace.updateView(current.id, view.value);
    return updated ? ok({ view: updated }) : fail('not_found');
  },
};

const PublishArgs = z.object({
  user_id: z.string().optional(),
  hash: z.string().optional(),
  view: z.unknown().optional(),
});

export const viewsPublish: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(PublishArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    if (args.user_id === undefined || !workspace.user(args.user_id)) return fail('user_not_found');
    const view = decodeView(args.view, 'home');
    if (!view.ok) return view.response;
    const current = workspace.homeView(args.user_id);
    if (current && args.hash !== undefined && args.hash !== '' && args.hash !== current.hash) {
      return fail('hash_conflict');
    }
    return ok({ view: workspace.publishHome(args.user_id, view.value) });
  },
};
