import { z } from 'zod';

// The console runs under a content security policy without 'unsafe-eval' (apps/server/src/http/security.ts).
// zod would probe `new Function` on its first parse to compile faster validators; the browser reports that
// probe as a violation even though zod catches the refusal. Without JIT, zod never tries.
z.config({ jitless: true });
