import { z } from 'zod';
import { Password } from '@lintel/core';
import { defineCommand } from '../command';
import { IdParam, OkReply } from '../resource';
import { fileArg } from '../upload';

export const userPassword = defineCommand({
  id: 'user.password',
  http: { method: 'POST', path: '/users/:id/password' },
  args: IdParam.extend({ new_password: Password }),
  result: OkReply,
  gates: { anyPermission: ['users.edit_all', 'users.edit_profile'] },
});

export const userSendRegistrationLink = defineCommand({
  id: 'user.send_registration_link',
  http: { method: 'POST', path: '/users/:id/registration-link' },
  args: IdParam,
  result: OkReply,
  gates: { anyPermission: ['users.create', 'users.edit_all'] },
});

/** An uploaded file of no declared kind: the server refuses it; declare file arguments with `fileArg(kind)`. */
export const FileArg = z.instanceof(Blob, { message: 'file_required' });

/** Uploads an avatar and crops it to the square `{x, y, size}` (pixels of the uploaded image). */
export const userAvatarUpload = defineCommand({
  id: 'user.avatar_upload',
  http: { method: 'POST', path: '/users/:id/avatar' },
  args: IdParam.extend({
    image: fileArg('avatar'),
    x: z.coerce.number().int().min(0).max(20_000),
    y: z.coerce.number().int().min(0).max(20_000),
    size: z.coerce.number().int().min(16).max(20_000),
  }),
  result: z.object({ avatar_url: z.string() }),
  gates: { anyPermission: ['users.edit_all', 'users.edit_profile'] },
});

export const userAvatarDelete = defineCommand({
  id: 'user.avatar_delete',
  http: { method: 'DELETE', path: '/users/:id/avatar' },
  args: IdParam,
  result: z.object({ avatar_url: z.null() }),
  gates: { anyPermission: ['users.edit_all', 'users.edit_profile'] },
});
