-- One exported and one local definition (for ../import_local_hidden.fut).
local def secret = 41i32
def public = secret + 1
