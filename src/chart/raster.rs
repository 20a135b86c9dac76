//! PNG charts rasterised from the SVG with resvg, text shaped with the same embedded DejaVu
//! Sans: a PNG shows exactly what the SVG does, letters spaced as in the SVG.

use super::ChartError;
use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{Options, Tree, fontdb};

/// The embedded fonts, loaded once: DejaVu Sans, the family the SVG names first (and the
/// `sans-serif` it falls back to).
fn fonts() -> Arc<fontdb::Database> {
    static FONTS: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            db.load_font_data(dejavu::sans::regular().to_vec());
            db.load_font_data(dejavu::sans::bold().to_vec());
            db.set_sans_serif_family("DejaVu Sans");
            Arc::new(db)
        })
        .clone()
}

/// The PNG of `svg`, at the SVG's own size.
pub fn png(svg: &str) -> Result<Vec<u8>, ChartError> {
    let options = Options {
        fontdb: fonts(),
        ..Options::default()
    };
    let tree = Tree::from_str(svg, &options)
        .map_err(|e| ChartError::Raster(format!("cannot read the SVG: {e}")))?;
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height())
        .ok_or(ChartError::Raster("an empty chart".into()))?;
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| ChartError::Raster(format!("cannot encode the PNG: {e}")))
}
