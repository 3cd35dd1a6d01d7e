-- Projecting a field that the record does not have.
-- ==
-- error: Field "z" does not exist

def main (p: {x: f32, y: f32}) = p.z
