import { Injectable, NotFoundException, StreamableFile } from '@nestjs/common';
import { readGraphiqlAssets } from './graphiql-assets';
import { graphiqlPage } from './graphiql-page';

/** GraphiQL from the admin's own files (no CDN), so it works without internet access. */
@Injectable()
export class GraphiqlService {
  private readonly assets = readGraphiqlAssets();
  private readonly html = graphiqlPage(this.assets);

  page(): string {
    return this.html;
  }

  file(name: string): StreamableFile {
    const asset = this.assets.byName.get(name);
    if (asset === undefined) throw new NotFoundException(`GraphiQL has no file ${name}`);
    return new StreamableFile(asset.body, { type: asset.type, length: asset.body.length });
  }
}
