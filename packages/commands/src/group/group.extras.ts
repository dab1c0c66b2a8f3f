import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { IdParam, OkReply } from '../resource';
import { Id, Ref } from '../refs';
import { fileArg } from '../upload';
import { groupResource, WhiteLabelInput, WhiteLabelSettings } from './group.resource';

const viewGates = { anyPermission: groupResource.gates.view };

export const GroupNode = z.object({
  id: z.number().int(),
  name: z.string(),
  parent_id: z.number().int().nullable(),
  logic_address: z.string().nullable(),
  type: z.string().nullable(),
});

/** Every group the caller may see, flat and unpaged (pickers, the tree). */
export const groupFull = defineCommand({
  id: 'group.full',
  http: { method: 'GET', path: '/domains/full' },
  args: NoArgs,
  result: z.object({ data: z.array(GroupNode) }),
  gates: viewGates,
});

export const groupChildren = defineCommand({
  id: 'group.children',
  http: { method: 'GET', path: '/domains/:id/children' },
  args: IdParam,
  result: z.object({ data: z.array(GroupNode) }),
  gates: viewGates,
});

export interface GroupTreeNode extends z.infer<typeof GroupNode> {
  children: GroupTreeNode[];
}
export const GroupTreeNode: z.ZodType<GroupTreeNode> = GroupNode.extend({
  children: z.lazy(() => z.array(GroupTreeNode)),
});

export const groupTree = defineCommand({
  id: 'group.tree',
  http: { method: 'GET', path: '/domains/tree' },
  args: NoArgs,
  result: z.object({ data: z.array(GroupTreeNode) }),
  gates: viewGates,
});

/** Bulk generation input (spec part 1 §3): `count` groups under `id`, named prefix + number. */
export const GenerateGroups = z
  .object({
    id: Id,
    count: z.number().int().min(1).max(1000),
    /** kept as typed: the space of `Flat ` is what separates the word from the number */
    prefix: z.string().max(200).default(''),
    logic_number: z.number().int().min(0).max(999_999).nullable().default(null),
    numeration: z
      .object({
        from: z.number().int().min(0).max(999_999).default(1),
        except: z.array(z.number().int().min(0).max(999_999)).max(1000).default([]),
        is_in_youngest_num: z.boolean().default(false),
        is_start_youngest_num: z.boolean().default(false),
      })
      .default({ from: 1, except: [], is_in_youngest_num: false, is_start_youngest_num: false }),
    domain_type_id: Id.nullable().optional(),
  })
  .strict();

export const GeneratedGroup = z.object({
  name: z.string(),
  logic_address: z.string().nullable(),
  number: z.number().int(),
  exists: z.boolean(),
});

export const groupGenerate = defineCommand({
  id: 'group.generate',
  http: { method: 'POST', path: '/domains/generate' },
  args: GenerateGroups,
  result: z.object({ parent: Ref, items: z.array(GeneratedGroup) }),
  gates: { anyPermission: groupResource.gates.create },
});

export const groupSaveGenerated = defineCommand({
  id: 'group.save_generated',
  http: { method: 'POST', path: '/domains/generate/save' },
  args: GenerateGroups,
  result: z.object({ data: z.array(GroupNode) }),
  gates: { anyPermission: groupResource.gates.create },
});

/**
 * A group's white-label (spec part 1 §3 `whitelabel_settings`; part 2 §6 "manage own domain: … white-label
 * settings (lets a group save or remove its logo)", §7 "Domains: … white-label logo upload and delete"): read
 * by whoever sees the group or brands his own; changed with `domains.edit_all` (any group),
 * `domains.edit_descendant` (the groups below one's own) or `domains.own_white_label` (one's own groups), and
 * the licence `mobile_app.is_white_label_enabled`.
 */
const brandGates = {
  anyPermission: ['domains.edit_all', 'domains.edit_descendant', 'domains.own_white_label'],
  licence: ['mobile_app.is_white_label_enabled'],
} as const;

/**
 * The white-label a group shows (docs/decisions.md "White-label"): its own when enabled, else its nearest
 * ancestor's enabled one, else the project's when enabled; `source` says whose, `group` which group's.
 */
export const EffectiveWhiteLabel = z.object({
  source: z.enum(['group', 'project', 'none']),
  group: Ref.nullable(),
  settings: WhiteLabelSettings,
});
export type EffectiveWhiteLabel = z.infer<typeof EffectiveWhiteLabel>;

const GroupWhiteLabelReply = z.object({ data: WhiteLabelSettings, effective: EffectiveWhiteLabel });

export const groupWhiteLabelGet = defineCommand({
  id: 'group.whitelabel_get',
  http: { method: 'GET', path: '/domains/:id/whitelabel' },
  args: IdParam,
  result: GroupWhiteLabelReply,
  gates: { anyPermission: [...groupResource.gates.view, 'domains.own_white_label'] },
});

export const groupWhiteLabelUpdate = defineCommand({
  id: 'group.whitelabel_update',
  http: { method: 'PATCH', path: '/domains/:id/whitelabel' },
  args: IdParam.extend(WhiteLabelInput.partial().shape).strict(),
  result: GroupWhiteLabelReply,
  gates: brandGates,
});

/** A PNG, JPEG or GIF, stored again as PNG of at most 512 px; it replaces the group's logo stored before. */
export const groupWhiteLabelLogoUpload = defineCommand({
  id: 'group.whitelabel_logo_upload',
  http: { method: 'POST', path: '/domains/:id/whitelabel-logo' },
  args: IdParam.extend({ image: fileArg('logo') }),
  result: GroupWhiteLabelReply,
  gates: brandGates,
});

/** The group's white-label logo needs the white-label licence. */
export const groupWhiteLabelLogoDelete = defineCommand({
  id: 'group.whitelabel_logo_delete',
  http: { method: 'DELETE', path: '/domains/:id/whitelabel-logo' },
  args: IdParam,
  result: OkReply,
  gates: brandGates,
});
