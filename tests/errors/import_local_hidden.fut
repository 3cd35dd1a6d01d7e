-- A "local" declaration of an imported file is not visible to the importer.
-- ==
-- error: Unknown name "secret"

import "modlib/with_local"

def main = public + secret
